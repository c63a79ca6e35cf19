// The engine's API: the token from sessionStorage as a bearer header, errors as readable text.
const TOKEN_KEY = 'seatflow.apiToken';

export const token = {
  get: () => sessionStorage.getItem(TOKEN_KEY) || '',
  set: (value) => sessionStorage.setItem(TOKEN_KEY, value),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

// `body` is the error's JSON answer (null when it had none), for the fields an action reads, such
// as a close's "result".
export class ApiError extends Error {
  constructor(status, message, field, body = null) {
    super(message);
    this.status = status;
    this.field = field;
    this.body = body;
  }
}

// The bounded wait of one API call; the engine answers within its own deadlines well before.
const REQUEST_TIMEOUT_MS = 15000;

export async function api(method, path, {query, body} = {}) {
  const url = new URL(path, window.location.origin);
  for (const [name, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, value);
  }
  const headers = {Authorization: `Bearer ${token.get()}`};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(url, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit', cache: 'no-store', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    throw new ApiError(0, `The engine did not answer (${error.name === 'TimeoutError' ? 'timed out' : error.message}).`);
  }
  const text = await response.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { json = null; }
  if (!response.ok) {
    const message = json && typeof json.error === 'string' ? json.error : (text || response.statusText);
    throw new ApiError(response.status, `${response.status}: ${message}`, json && json.field, json);
  }
  return json;
}

export async function metricsText() {
  const response = await fetch('/metrics', {credentials: 'omit', cache: 'no-store',
                                            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)});
  if (!response.ok) throw new ApiError(response.status, `metrics: ${response.status}`);
  return response.text();
}
