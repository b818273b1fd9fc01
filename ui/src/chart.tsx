// Hand-made SVG charts (no chart library): a line chart over time and a horizontal bar chart. Each is an
// image with a text name for screen readers; the numbers themselves are in the table beside it.

export interface Line {
  name: string;
  values: number[];
  tone: 'a' | 'b' | 'c';
}

const WIDTH = 600;
const HEIGHT = 160;
const PAD = 28;

function pathOf(values: number[], max: number): string {
  const step = values.length > 1 ? (WIDTH - 2 * PAD) / (values.length - 1) : 0;
  return values
    .map((value, i) => {
      const x = PAD + i * step;
      const y = HEIGHT - PAD - (max > 0 ? (value / max) * (HEIGHT - 2 * PAD) : 0);
      return `${i === 0 ? 'M' : 'L'}${x.toFixed(1)},${y.toFixed(1)}`;
    })
    .join(' ');
}

function niceMax(values: number[]): number {
  const max = Math.max(0, ...values);
  if (max === 0) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(max));
  return Math.ceil(max / magnitude) * magnitude;
}

export function LineChart({ lines, label, from, to }: { lines: Line[]; label: string; from?: string; to?: string }) {
  const max = niceMax(lines.flatMap((l) => l.values));
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={label}>
        <title>{label}</title>
        <line class="axis" x1={PAD} y1={HEIGHT - PAD} x2={WIDTH - PAD} y2={HEIGHT - PAD} />
        <line class="axis" x1={PAD} y1={PAD} x2={PAD} y2={HEIGHT - PAD} />
        <text class="tick" x={PAD - 4} y={PAD + 4} text-anchor="end">
          {max.toLocaleString('en-US')}
        </text>
        <text class="tick" x={PAD - 4} y={HEIGHT - PAD} text-anchor="end">
          0
        </text>
        {from && (
          <text class="tick" x={PAD} y={HEIGHT - 8}>
            {from}
          </text>
        )}
        {to && (
          <text class="tick" x={WIDTH - PAD} y={HEIGHT - 8} text-anchor="end">
            {to}
          </text>
        )}
        {lines.map((line) => (
          <path key={line.name} class={`line tone-${line.tone}`} d={pathOf(line.values, max)} />
        ))}
      </svg>
      <figcaption>
        {lines.map((line) => (
          <span key={line.name} class={`legend tone-${line.tone}`}>
            {line.name}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

export function BarChart({ bars, label, format }: { bars: { label: string; value: number }[]; label: string; format: (value: number) => string }) {
  const max = Math.max(0, ...bars.map((b) => b.value)) || 1;
  const rowHeight = 22;
  const height = Math.max(1, bars.length) * rowHeight + 8;
  const labelWidth = 180;
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${WIDTH} ${height}`} role="img" aria-label={label}>
        <title>{label}</title>
        {bars.map((bar, i) => {
          const y = 4 + i * rowHeight;
          const width = ((WIDTH - labelWidth - 110) * bar.value) / max;
          return (
            <g key={bar.label}>
              <text class="tick" x={labelWidth - 6} y={y + 14} text-anchor="end">
                {bar.label.length > 28 ? `${bar.label.slice(0, 27)}…` : bar.label}
              </text>
              <rect class="bar" x={labelWidth} y={y + 2} width={Math.max(width, bar.value > 0 ? 1 : 0)} height={rowHeight - 6} />
              <text class="tick" x={labelWidth + width + 6} y={y + 14}>
                {format(bar.value)}
              </text>
            </g>
          );
        })}
      </svg>
    </figure>
  );
}
