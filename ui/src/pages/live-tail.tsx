// The live tail: an EventSource on ../admin/v1/requests/tail (the session cookie goes with it), newest
// first, at most 200 rows kept; says when the server dropped it (too slow) or it closed.
import { useEffect, useState } from 'preact/hooks';
import { api, query } from '../api.ts';
import type { RequestJson } from '../types.ts';
import { RequestTable } from './request-table.tsx';

const KEEP = 200;

export function LiveTail({ filters }: { filters: Record<string, string> }) {
  const [rows, setRows] = useState<RequestJson[]>([]);
  const [status, setStatus] = useState('Connecting…');
  const url = `../admin/v1/requests/tail${query(filters)}`;

  useEffect(() => {
    setRows([]);
    const source = new EventSource(url);
    source.onopen = () => setStatus('Live: new requests appear here as they finish.');
    source.addEventListener('request', (event) => {
      try {
        const row = JSON.parse((event as MessageEvent<string>).data) as RequestJson;
        setRows((current) => [row, ...current].slice(0, KEEP));
      } catch {
        // A line that is not a request is skipped; the next one still shows.
      }
    });
    source.addEventListener('dropped', () => {
      source.close();
      setStatus('The server stopped the live tail because this page fell behind. Turn the tail off and on to resume.');
    });
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) {
        setStatus('The live tail closed (signed out, expired, or the server is at its limit of live tails).');
        // A 401 here means the session ended: api() then returns the console to sign-in.
        void api('./api/session').catch(() => {});
      } else setStatus('Reconnecting…');
    };
    return () => source.close();
  }, [url]);

  return (
    <>
      <p class="live" role="status">
        {status}
      </p>
      <RequestTable rows={rows} caption="Live tail, newest first" empty="No request has finished since the tail started." />
    </>
  );
}
