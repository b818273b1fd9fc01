// Hash routing: the server only ever serves <base>/ui/, the page is picked from #/<page>[/<id>].
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  page: string;
  /** The part after the page: a request id on #/requests/<id>. */
  id: string | undefined;
}

export function parseHash(hash: string): Route {
  const path = hash.replace(/^#\/?/, '').split('?')[0];
  const [page, ...rest] = path.split('/');
  const id = rest.length > 0 ? decodeURIComponent(rest.join('/')) : undefined;
  return { page: page || 'overview', id: id || undefined };
}

export function navigate(path: string): void {
  window.location.hash = `#/${path}`;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(window.location.hash));
  useEffect(() => {
    const update = () => setRoute(parseHash(window.location.hash));
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return route;
}
