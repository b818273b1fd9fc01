// echo_llm: answers `echo: <prompt>`, as Triton's vLLM backend shapes an answer. sampling_parameters'
// max_tokens caps the words (finish_reason "length"); decoupled with stream true, each word is its own
// response and an empty last one carries the finish reason. Works decoupled or not (see config).
let herd;
let decoupled = false;

export function initialize(args) {
  herd = args.herd;
  decoupled = args.model_config.model_transaction_policy?.decoupled === true;
}

const words = (text) => text.match(/\s*\S+/g) ?? [];

function read(request) {
  const text = (name) => {
    const t = request.input(name);
    return t ? herd.decodeStrings(t)[0] : undefined;
  };
  const flag = (name) => {
    const t = request.input(name);
    return t ? Boolean(t.data[0]) : undefined;
  };
  const prompt = text('text_input') ?? '';
  const sampling = JSON.parse(text('sampling_parameters') ?? '{}');
  const answer = words(`echo: ${prompt}`);
  const limit = Number.isInteger(sampling.max_tokens) ? sampling.max_tokens : Infinity;
  return {
    prompt,
    pieces: answer.slice(0, limit),
    finish: answer.length > limit ? 'length' : 'stop',
    stream: flag('stream') === true,
    prepend: flag('exclude_input_in_output') === false,
    // Every output a client names (all of them when it names none) must be in each response.
    requested: new Set(request.requestedOutputNames()),
  };
}

/** The finish reason is on the last response only (the others carry an empty one). */
function outputs(call, text, outputTokens, last) {
  const out = [herd.createTensor('text_output', 'BYTES', [1], [text])];
  const add = (name, datatype, value) => call.requested.has(name) && out.push(herd.createTensor(name, datatype, [1], [value]));
  add('finish_reason', 'BYTES', last ? call.finish : '');
  add('num_input_tokens', 'UINT32', words(call.prompt).length);
  add('num_output_tokens', 'UINT32', outputTokens);
  return { outputs: out };
}

function whole(call) {
  return outputs(call, (call.prepend ? call.prompt : '') + call.pieces.join(''), call.pieces.length, true);
}

export function execute(requests) {
  if (!decoupled) return requests.map((request) => whole(read(request)));
  for (const request of requests) {
    const sender = request.responseSender();
    const call = read(request);
    if (!call.stream) {
      sender.send(whole(call), { final: true });
      continue;
    }
    if (call.prepend) {
      sender.send({ error: herd.createError('INVALID_ARG', 'When streaming, `exclude_input_in_output` = False is not allowed.') }, { final: true });
      continue;
    }
    for (const piece of call.pieces) sender.send(outputs(call, piece, 1, false));
    sender.send(outputs(call, '', 0, true), { final: true });
  }
  return undefined;
}
