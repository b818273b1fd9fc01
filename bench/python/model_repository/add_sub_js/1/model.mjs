// OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1 (INT32), one response per request.
let herd;

export function initialize(args) {
  herd = args.herd;
}

export function execute(requests) {
  return requests.map((request) => {
    const a = request.input('INPUT0');
    const b = request.input('INPUT1');
    const sum = new Int32Array(a.data.length);
    const diff = new Int32Array(a.data.length);
    for (let i = 0; i < sum.length; i++) {
      sum[i] = a.data[i] + b.data[i];
      diff[i] = a.data[i] - b.data[i];
    }
    return { outputs: [herd.createTensor('OUTPUT0', 'INT32', a.shape, sum), herd.createTensor('OUTPUT1', 'INT32', a.shape, diff)] };
  });
}
