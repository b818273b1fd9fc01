// Playground: chat with any gateway route (streaming, which deployment answered, tokens and cost) and a
// KServe infer form built from a served model's metadata. A viewer sees the models, not the forms.
import { Heading } from '../components.tsx';
import { useIsAdmin, useSession } from '../session.ts';
import { ChatPlayground } from './playground-chat.tsx';
import { InferPlayground } from './playground-infer.tsx';

export function PlaygroundPage() {
  const session = useSession();
  const admin = useIsAdmin();
  return (
    <>
      <Heading>Playground</Heading>
      {!admin && <p class="muted">Sending from the playground needs an admin session: it makes real, billed requests (the gateway refuses a viewer's calls).</p>}
      {session.server.gateway && <ChatPlayground readOnly={!admin} />}
      {session.server.serving && <InferPlayground readOnly={!admin} />}
      {!session.server.gateway && !session.server.serving && <p class="muted">This server runs neither the gateway nor serving.</p>}
    </>
  );
}
