// How long one model call may take: the default and the highest limit the config accepts. Apart from the client so
// that config loading does not load the OpenAI package.

/**
 * The default time limit of one model call. A Fara step (a system prompt, up to 3 screenshots, a few hundred tokens
 * out) takes 2–10 s on an idle GPU and 30–60 s on a loaded one (continuous batching shares it with other requests);
 * 120 s leaves twice the loaded time and bounds a hung endpoint's 5 tries with backoff to about 11 minutes.
 */
export const DEFAULT_MODEL_TIMEOUT_SECONDS = 120;
/**
 * The highest limit a call may be given: Node's fetch gives up on a response whose headers take longer than 300 s
 * (undici's headersTimeout), and a non-streamed completion sends its headers with the answer.
 */
export const MAX_MODEL_TIMEOUT_SECONDS = 300;
