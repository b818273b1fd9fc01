// The KServe half of the playground: pick a served model, read its metadata (GET ../v2/models/<m>),
// one labelled field per input (shape and data, prefilled), POST ../v2/models/<m>/infer, show the outputs.
import { useState } from 'preact/hooks';
import { api, messageOf } from '../api.ts';
import { ErrorNote, Loaded } from '../components.tsx';
import { useLoad } from '../hooks.ts';
import { defaultData, defaultShape, type InputDraft, inferBody } from '../kserve-form.ts';
import type { ModelMetadataJson, ServingModelJson, TensorMeta } from '../types.ts';

interface InferAnswer {
  model_name: string;
  model_version?: string;
  outputs: (TensorMeta & { data: unknown[] })[];
}

const modelUrl = (name: string) => `../v2/models/${encodeURIComponent(name)}`;

export function InferPlayground({ readOnly }: { readOnly: boolean }) {
  const models = useLoad((signal) => api<{ data: ServingModelJson[] }>('../admin/v1/serving/models', { signal }), []);
  return (
    <section aria-labelledby="infer-heading">
      <h2 id="infer-heading">KServe inference</h2>
      <Loaded state={models} what="the served models">
        {(list) => {
          const ready = [...new Set(list.data.filter((m) => m.state === 'READY').map((m) => m.name))];
          return readOnly ? <p class="muted">Served models ready: {ready.join(', ') || 'none'}.</p> : <InferForm names={ready} />;
        }}
      </Loaded>
    </section>
  );
}

function InferForm({ names }: { names: string[] }) {
  const [model, setModel] = useState(names[0] ?? '');
  const metadata = useLoad((signal) => (model ? api<ModelMetadataJson>(modelUrl(model), { signal, csrf: true }) : Promise.resolve(undefined)), [model]);
  if (names.length === 0) return <p class="muted">No served model is ready.</p>;
  return (
    <>
      <div class="field">
        <label for="infer-model">Served model</label>
        <select id="infer-model" value={model} onChange={(e) => setModel(e.currentTarget.value)}>
          {names.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </div>
      <Loaded state={metadata} what="the model's metadata">
        {(meta) => meta && <InputsForm key={meta.name} meta={meta} />}
      </Loaded>
    </>
  );
}

function InputsForm({ meta }: { meta: ModelMetadataJson }) {
  const [drafts, setDrafts] = useState<Record<string, InputDraft>>(() =>
    Object.fromEntries(meta.inputs.map((input) => [input.name, { shape: defaultShape(input).join(', '), data: defaultData(input) }])),
  );
  const [answer, setAnswer] = useState<InferAnswer | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const edit = (name: string, part: keyof InputDraft, value: string) => setDrafts({ ...drafts, [name]: { ...drafts[name], [part]: value } });
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const body = inferBody(meta.inputs, drafts);
      setAnswer(await api<InferAnswer>(`${modelUrl(meta.name)}/infer`, { method: 'POST', body, csrf: true }));
    } catch (caught) {
      setAnswer(undefined);
      setError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="infer-form" onSubmit={submit} aria-label={`Inputs of ${meta.name}`}>
      {meta.inputs.map((input) => (
        <fieldset key={input.name}>
          <legend>
            Input {input.name} ({input.datatype}, shape [{input.shape.join(', ')}])
          </legend>
          <div class="field">
            <label for={`infer-shape-${input.name}`}>Shape of {input.name}</label>
            <input id={`infer-shape-${input.name}`} value={drafts[input.name]?.shape ?? ''} onInput={(e) => edit(input.name, 'shape', e.currentTarget.value)} />
          </div>
          <div class="field wide">
            <label for={`infer-data-${input.name}`}>Data of {input.name}</label>
            <textarea id={`infer-data-${input.name}`} rows={3} value={drafts[input.name]?.data ?? ''} onInput={(e) => edit(input.name, 'data', e.currentTarget.value)} />
          </div>
        </fieldset>
      ))}
      <div class="form-actions">
        <button type="submit" disabled={busy}>
          Infer
        </button>
      </div>
      <ErrorNote error={error} />
      {answer && <Outputs answer={answer} />}
    </form>
  );
}

function Outputs({ answer }: { answer: InferAnswer }) {
  return (
    <table>
      <caption>
        Outputs of {answer.model_name}
        {answer.model_version ? ` version ${answer.model_version}` : ''}
      </caption>
      <thead>
        <tr>
          <th scope="col">Output</th>
          <th scope="col">Datatype</th>
          <th scope="col">Shape</th>
          <th scope="col">Data</th>
        </tr>
      </thead>
      <tbody>
        {answer.outputs.map((o) => (
          <tr key={o.name}>
            <th scope="row">{o.name}</th>
            <td>{o.datatype}</td>
            <td>[{o.shape.join(', ')}]</td>
            <td>
              <code class="data">{truncate(JSON.stringify(o.data))}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function truncate(text: string): string {
  return text.length > 2000 ? `${text.slice(0, 2000)}… (${text.length} characters)` : text;
}
