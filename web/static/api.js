// The admin API client: every call carries the bearer token; events arrive as server-sent
// events read with fetch (EventSource cannot send an Authorization header).

export class Unauthorized extends Error {}

export class API {
  constructor(base, token) {
    this.base = base.replace(/\/$/, '');
    this.token = token;
  }

  async request(method, path, body) {
    // No token: the dashboard session's cookie (HttpOnly, same origin) authenticates.
    const init = { method, headers: this.token ? { Authorization: `Bearer ${this.token}` } : {} };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const resp = await fetch(this.base + path, init);
    const text = await resp.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch { data = { error: text }; }
    if (resp.status === 401) throw new Unauthorized(data?.error || 'unauthorized');
    if (!resp.ok) {
      const e = new Error(data?.error || data?.message || `${resp.status} ${resp.statusText}`);
      e.status = resp.status;
      throw e;
    }
    return data;
  }

  get(path) { return this.request('GET', path); }
  post(path, body) { return this.request('POST', path, body ?? {}); }
  del(path) { return this.request('DELETE', path); }

  // stream reads text/event-stream from path and calls onEvent(name, data) per event until
  // signal aborts; it reconnects after a drop. onState(true|false) reports the connection.
  async stream(path, onEvent, onState, signal) {
    let backoff = 500;
    while (!signal.aborted) {
      try {
        const resp = await fetch(this.base + path, {
          headers: this.token ? { Authorization: `Bearer ${this.token}`, Accept: 'text/event-stream' } : { Accept: 'text/event-stream' }, signal,
        });
        if (resp.status === 401) throw new Unauthorized('unauthorized');
        if (!resp.ok || !resp.body) throw new Error(`events: ${resp.status}`);
        onState(true);
        backoff = 500;
        const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value.replace(/\r\n/g, '\n');
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            let name = 'message';
            const data = [];
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) continue;
              const c = line.indexOf(':');
              const field = c < 0 ? line : line.slice(0, c);
              const val = c < 0 ? '' : line.slice(c + 1).replace(/^ /, '');
              if (field === 'event') name = val;
              else if (field === 'data') data.push(val);
            }
            if (data.length) {
              let parsed = data.join('\n');
              try { parsed = JSON.parse(parsed); } catch { /* keep text */ }
              onEvent(name, parsed);
            }
          }
        }
      } catch (e) {
        if (e instanceof Unauthorized) { onState(false); throw e; }
        if (signal.aborted) break;
      }
      onState(false);
      await new Promise((r) => setTimeout(r, backoff));
      backoff = Math.min(backoff * 2, 10000);
    }
  }
}
