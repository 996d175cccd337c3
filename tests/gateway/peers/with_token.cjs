// Preloaded into the conformance suite's Node process (NODE_OPTIONS=--require): every
// fetch to the endpoint carries the client token from GATEWAY_TOKEN, as a client's own
// config would send it. The suite's scenarios have no way to send a header themselves.
const token = process.env.GATEWAY_TOKEN;
const original = globalThis.fetch;
globalThis.fetch = (input, init = {}) => {
  const headers = new Headers(init.headers || (input instanceof Request ? input.headers : undefined));
  if (!headers.has('authorization')) headers.set('authorization', `Bearer ${token}`);
  return original(input, { ...init, headers });
};
