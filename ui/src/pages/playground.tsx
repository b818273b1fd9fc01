// Playground: chat with any gateway route (streaming, which deployment answered, tokens and cost) and a
// KServe infer form built from a served model's metadata. Admin only: it sends real, billed requests.
import { Heading } from '../components.tsx';
import { useIsAdmin, useSession } from '../session.ts';
import { ChatPlayground } from './playground-chat.tsx';
import { InferPlayground } from './playground-infer.tsx';

export function PlaygroundPage() {
  const session = useSession();
  const admin = useIsAdmin();
  if (!admin)
    return (
      <>
        <Heading>Playground</Heading>
        <p class="muted">The playground needs an admin session: it sends real requests (the gateway refuses a viewer's calls).</p>
      </>
    );
  return (
    <>
      <Heading>Playground</Heading>
      {session.server.gateway && <ChatPlayground />}
      {session.server.serving && <InferPlayground />}
      {!session.server.gateway && !session.server.serving && <p class="muted">This server runs neither the gateway nor serving.</p>}
    </>
  );
}
