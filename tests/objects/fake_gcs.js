// tests/objects/fake_gcs.js — a small loopback GCS (JSON API subset) for the
// provider tests: no GCS server can run here (../shared/notes/services.md §6).
// Faithful where the provider depends on it:
//   - OAuth token endpoint (POST /token, RFC 7523 JWT bearer grant): the JWT's
//     RS256 signature is verified against the test service account's public
//     key, and iss/aud/scope/iat/exp are checked; issued tokens expire;
//   - every storage request needs a live bearer token (401 otherwise);
//   - multipart uploads (uploadType=multipart) with ifGenerationMatch
//     preconditions (412), md5Hash checked against the bytes (400), write-
//     unique generations (microsecond clock, strictly increasing), metadata;
//   - generation-pinned metadata/media reads (x-goog-generation echoed,
//     ranges 206/416) and deletes (404 when absent), noncurrent versions when
//     the bucket has versioning;
//   - listing of live objects in byte order with prefix, maxResults,
//     startOffset (inclusive) and opaque pageTokens;
//   - bucket metadata: iamConfiguration (uniform bucket-level access,
//     public access prevention), versioning, lifecycle rules.
// Node's single thread makes each conditional upload atomic.
//
// Usage: node fake_gcs.js SA_EMAIL PUBLIC_KEY_PEM_FILE [STATIC_BEARER_TOKEN]; prints the port.
// With FAKE_TLS_CERT/FAKE_TLS_KEY set it serves HTTPS; FAKE_BUCKETS=a,b pre-creates buckets.
// Control (unauthenticated) on /__ctl/...:
//   POST /__ctl/bucket?name=B[&ubla=0][&pap=inherited][&versioning=1]
//   POST /__ctl/set?bucket=B&lifecycle=<json>|ubla=0|1|pap=X|ignore_precondition=1|deny_metadata=1
//   POST /__ctl/fault?mode=503|429|truncate|hang|reset&count=N[&retry_after=S][&target=token]
//   POST /__ctl/token?expires_in=N | revoke=1 | clock_offset_s=S
//   GET  /__ctl/stats -> {"requests":N,"token_requests":N,"created":N,"precondition_failed":N}
'use strict';
const http = require('http');
const crypto = require('crypto');
const fs = require('fs');

const [EMAIL, PUBKEY_FILE, STATIC_TOKEN] = process.argv.slice(2);
const PUBKEY = crypto.createPublicKey(fs.readFileSync(PUBKEY_FILE));
const SCOPE = 'https://www.googleapis.com/auth/devstorage.read_write';
const buckets = new Map(); // name -> {cfg, objects: Map(name -> [versions oldest..newest])}
const tokens = new Map(); // token -> expiry (ms)
let tokenLifetime = 3600;
let fault = { mode: null, count: 0, retryAfter: null, target: 'storage' };
const stats = { requests: 0, token_requests: 0, created: 0, precondition_failed: 0 };
let lastGen = 0;
let clockOffsetS = 0; // the token endpoint's clock minus the real one (clock skew tests)
let port = 0;

const nextGen = () => (lastGen = Math.max(lastGen + 1, Date.now() * 1000));
const md5b64 = (b) => crypto.createHash('md5').update(b).digest('base64');

function send(res, status, body, headers) {
  const b = Buffer.isBuffer(body) ? body : Buffer.from(body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body));
  res.writeHead(status, Object.assign({ 'Content-Length': b.length, 'Content-Type': 'application/json; charset=UTF-8' }, headers || {}));
  res.end(b);
}
const gerror = (res, status, reason, message) =>
  send(res, status, { error: { code: status, message: message || reason, errors: [{ reason, message: message || reason }] } });

function parseQuery(raw) {
  const q = new Map();
  for (const part of (raw || '').split('&')) {
    if (!part) continue;
    const i = part.indexOf('=');
    q.set(decodeURIComponent(i < 0 ? part : part.slice(0, i)), decodeURIComponent(i < 0 ? '' : part.slice(i + 1).replace(/\+/g, '%20')));
  }
  return q;
}

// ---- token endpoint ------------------------------------------------------------------

const b64url = (s) => Buffer.from(s.replace(/-/g, '+').replace(/_/g, '/'), 'base64');

function tokenEndpoint(req, res, body) {
  stats.token_requests++;
  const f = parseQuery(body.toString());
  if (f.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return send(res, 400, { error: 'unsupported_grant_type' });
  const parts = (f.get('assertion') || '').split('.');
  if (parts.length !== 3) return send(res, 400, { error: 'invalid_grant', error_description: 'malformed' });
  let hdr, claims;
  try {
    hdr = JSON.parse(b64url(parts[0]).toString());
    claims = JSON.parse(b64url(parts[1]).toString());
  } catch (e) {
    return send(res, 400, { error: 'invalid_grant', error_description: 'malformed' });
  }
  if (hdr.alg !== 'RS256') return send(res, 400, { error: 'invalid_grant', error_description: 'alg' });
  const ok = crypto.verify('RSA-SHA256', Buffer.from(parts[0] + '.' + parts[1]), PUBKEY, b64url(parts[2]));
  if (!ok) return send(res, 400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
  const now = Math.floor(Date.now() / 1000) + clockOffsetS;
  if (claims.iss !== EMAIL) return send(res, 400, { error: 'invalid_grant', error_description: 'iss' });
  if (claims.aud !== `${scheme}://127.0.0.1:${port}/token`) return send(res, 400, { error: 'invalid_grant', error_description: 'aud' });
  if (!String(claims.scope || '').split(' ').includes(SCOPE)) return send(res, 400, { error: 'invalid_scope' });
  if (!(claims.iat <= now + 60 && claims.iat >= now - 300 && claims.exp > now && claims.exp - claims.iat <= 3600))
    return send(res, 400, { error: 'invalid_grant', error_description: 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.' });
  const t = 'ya29.fake-' + crypto.randomBytes(18).toString('base64url');
  tokens.set(t, Date.now() + tokenLifetime * 1000);
  return send(res, 200, { access_token: t, expires_in: tokenLifetime, token_type: 'Bearer' });
}

function authorised(req) {
  const m = /^Bearer (\S+)$/.exec(req.headers['authorization'] || '');
  if (!m) return false;
  if (STATIC_TOKEN && m[1] === STATIC_TOKEN) return true;
  const exp = tokens.get(m[1]);
  return exp !== undefined && exp > Date.now();
}

// ---- objects -----------------------------------------------------------------------------

const live = (vs) => (vs && vs.length && vs[vs.length - 1].live ? vs[vs.length - 1] : null);

function resource(b, name, v) {
  const r = { kind: 'storage#object', id: `${b.name}/${name}/${v.gen}`, name, bucket: b.name, generation: String(v.gen),
    metageneration: '1', contentType: v.ct, size: String(v.data.length), md5Hash: v.md5, storageClass: 'STANDARD',
    timeCreated: new Date(v.mtime || Date.now()).toISOString() };
  if (v.cacheControl) r.cacheControl = v.cacheControl;
  if (v.metadata) r.metadata = v.metadata;
  return r;
}

function upload(req, res, b, q, body) {
  if (q.get('uploadType') !== 'multipart') return gerror(res, 400, 'invalid', 'only multipart uploads in this fake');
  const m = /^multipart\/related; *boundary=("?)([^";]+)\1$/.exec(req.headers['content-type'] || '');
  if (!m) return gerror(res, 400, 'invalid', 'bad content type');
  const delim = Buffer.from(`--${m[2]}\r\n`);
  const sep = Buffer.from(`\r\n--${m[2]}\r\n`);
  const close = Buffer.from(`\r\n--${m[2]}--`);
  if (body.indexOf(delim) !== 0) return gerror(res, 400, 'invalid', 'multipart');
  const p1End = body.indexOf(sep);
  const closeAt = body.lastIndexOf(close);
  if (p1End < 0 || closeAt < p1End) return gerror(res, 400, 'invalid', 'multipart');
  const part = (buf) => {
    const h = buf.indexOf('\r\n\r\n');
    return h < 0 ? null : { headers: buf.subarray(0, h).toString(), data: buf.subarray(h + 4) };
  };
  const meta = part(body.subarray(delim.length, p1End));
  const media = part(body.subarray(p1End + sep.length, closeAt));
  if (!meta || !media || !/content-type: *application\/json/i.test(meta.headers)) return gerror(res, 400, 'invalid', 'multipart parts');
  let md;
  try {
    md = JSON.parse(meta.data.toString());
  } catch (e) {
    return gerror(res, 400, 'parseError', 'metadata');
  }
  const name = md.name || q.get('name');
  if (!name) return gerror(res, 400, 'required', 'name');
  const data = Buffer.from(media.data);
  if (md.md5Hash !== undefined && md.md5Hash !== md5b64(data)) return gerror(res, 400, 'invalid', 'Provided MD5 hash does not match');
  const vs = b.objects.get(name) || [];
  const cur = live(vs);
  if (q.has('ifGenerationMatch') && !b.cfg.ignore_precondition) {
    const want = q.get('ifGenerationMatch');
    if (!/^\d+$/.test(want)) return gerror(res, 400, 'invalid', 'ifGenerationMatch');
    if ((want === '0' && cur) || (want !== '0' && (!cur || String(cur.gen) !== want))) {
      stats.precondition_failed++;
      return gerror(res, 412, 'conditionNotMet', 'At least one of the pre-conditions you specified did not hold.');
    }
  }
  const v = { gen: nextGen(), data, ct: md.contentType || 'application/octet-stream', md5: md5b64(data),
    cacheControl: md.cacheControl, metadata: md.metadata, live: true, mtime: Date.now() };
  if (cur) {
    if (b.cfg.versioning) cur.live = false;
    else vs.splice(vs.indexOf(cur), 1);
  }
  vs.push(v);
  b.objects.set(name, vs);
  stats.created++;
  return send(res, 200, resource(b, name, v));
}

function findGen(vs, q) {
  if (!q.has('generation')) return { v: live(vs) };
  const g = q.get('generation');
  if (!/^\d+$/.test(g)) return { bad: true };
  return { v: (vs || []).find((x) => String(x.gen) === g) || null };
}

function objectOp(req, res, b, name, q) {
  const vs = b.objects.get(name);
  const { v, bad } = findGen(vs, q);
  if (bad) return gerror(res, 400, 'invalid', 'Invalid argument generation');
  if (req.method === 'GET') {
    if (!v) return gerror(res, 404, 'notFound', 'No such object');
    if (q.get('alt') !== 'media') return send(res, 200, resource(b, name, v));
    const h = { 'Content-Type': v.ct, 'x-goog-generation': String(v.gen), 'x-goog-metageneration': '1',
      'x-goog-hash': `md5=${v.md5}`, 'x-goog-stored-content-length': String(v.data.length), 'Accept-Ranges': 'bytes' };
    let data = v.data;
    let status = 200;
    const range = req.headers['range'];
    if (range) {
      const m = /^bytes=(\d+)-(\d*)$/.exec(range);
      if (m) {
        const start = +m[1];
        const end = m[2] === '' ? data.length - 1 : Math.min(+m[2], data.length - 1);
        if (start >= data.length) return send(res, 416, '', { 'Content-Range': `bytes */${data.length}` });
        h['Content-Range'] = `bytes ${start}-${end}/${data.length}`;
        data = data.subarray(start, end + 1);
        status = 206;
      }
    }
    if (fault.target === 'storage' && fault.mode === 'truncate' && fault.count > 0) {
      fault.count--;
      res.writeHead(status, Object.assign(h, { 'Content-Length': data.length + 100 }));
      res.write(data);
      return setTimeout(() => res.socket && res.socket.destroy(), 20);
    }
    res.writeHead(status, Object.assign(h, { 'Content-Length': data.length }));
    return res.end(data);
  }
  if (req.method === 'DELETE') {
    if (!v) return gerror(res, 404, 'notFound', 'No such object');
    if (!q.has('generation') && b.cfg.versioning) v.live = false; // becomes noncurrent
    else vs.splice(vs.indexOf(v), 1); // a generation is deleted permanently
    if (!vs.length) b.objects.delete(name);
    return send(res, 204, '');
  }
  return gerror(res, 405, 'methodNotAllowed');
}

function list(req, res, b, q) {
  const prefix = q.get('prefix') || '';
  const max = Math.max(1, Math.min(1000, parseInt(q.get('maxResults') || '1000', 10)));
  const start = q.get('startOffset');
  const after = q.has('pageToken') ? Buffer.from(q.get('pageToken'), 'base64url').toString() : null;
  const cmp = (x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y));
  const names = [...b.objects.keys()]
    .filter((n) => live(b.objects.get(n)) && n.startsWith(prefix))
    .filter((n) => start === undefined || cmp(n, start) >= 0)
    .filter((n) => after === null || cmp(n, after) > 0)
    .sort(cmp);
  const page = names.slice(0, max);
  const out = { kind: 'storage#objects', items: page.map((n) => resource(b, n, live(b.objects.get(n)))) };
  if (names.length > max) out.nextPageToken = Buffer.from(page[page.length - 1]).toString('base64url');
  if (!out.items.length) delete out.items; // GCS omits an empty items array
  return send(res, 200, out);
}

function bucketGet(res, b) {
  if (b.cfg.deny_metadata) return gerror(res, 403, 'forbidden', 'does not have storage.buckets.get access');
  const r = { kind: 'storage#bucket', name: b.name, location: 'US', storageClass: 'STANDARD',
    iamConfiguration: { uniformBucketLevelAccess: { enabled: !!b.cfg.ubla }, publicAccessPrevention: b.cfg.pap },
    versioning: { enabled: !!b.cfg.versioning } };
  if (b.cfg.lifecycle) r.lifecycle = b.cfg.lifecycle;
  return send(res, 200, r);
}

function control(req, res, path, q) {
  const get = (k) => q.get(k);
  if (path === '/__ctl/stats') return send(res, 200, stats);
  if (path === '/__ctl/bucket') {
    const name = get('name');
    buckets.set(name, { name, objects: new Map(),
      cfg: { ubla: get('ubla') !== '0', pap: get('pap') || 'enforced', versioning: get('versioning') === '1' } });
    return send(res, 200, '');
  }
  if (path === '/__ctl/set') {
    const b = buckets.get(get('bucket'));
    if (!b) return send(res, 404, '');
    if (q.has('lifecycle')) b.cfg.lifecycle = JSON.parse(get('lifecycle'));
    if (q.has('ubla')) b.cfg.ubla = get('ubla') === '1';
    if (q.has('pap')) b.cfg.pap = get('pap');
    for (const k of ['ignore_precondition', 'deny_metadata', 'versioning']) if (q.has(k)) b.cfg[k] = get(k) === '1';
    return send(res, 200, '');
  }
  if (path === '/__ctl/fault') {
    fault = { mode: get('mode') || null, count: parseInt(get('count') || '0', 10), retryAfter: get('retry_after') || null,
      target: get('target') || 'storage' };
    return send(res, 200, '');
  }
  if (path === '/__ctl/token') {
    if (q.has('expires_in')) tokenLifetime = parseInt(get('expires_in'), 10);
    if (get('revoke') === '1') tokens.clear();
    if (q.has('clock_offset_s')) clockOffsetS = parseInt(get('clock_offset_s'), 10);
    return send(res, 200, '');
  }
  return send(res, 404, '');
}

// Applies a pending fault to a request of `target`; returns true when it answered (or swallowed) it.
function injectFault(req, res, target) {
  if (fault.target !== target || fault.count <= 0) return false;
  if (fault.mode === '503' || fault.mode === '429') {
    fault.count--;
    const h = fault.retryAfter ? { 'Retry-After': fault.retryAfter } : {};
    send(res, +fault.mode, { error: { code: +fault.mode, message: 'secret-looking body text' } }, h);
    return true;
  }
  if (fault.mode === 'hang') {
    fault.count--;
    return true; // never answer
  }
  if (fault.mode === 'reset') {
    fault.count--;
    req.socket.destroy();
    return true;
  }
  return false;
}

// FAKE_TLS_CERT / FAKE_TLS_KEY (PEM files): serve HTTPS instead (token endpoint too).
const tls = process.env.FAKE_TLS_CERT
  ? { cert: fs.readFileSync(process.env.FAKE_TLS_CERT), key: fs.readFileSync(process.env.FAKE_TLS_KEY) }
  : null;
// FAKE_BUCKETS=a,b: buckets that exist from the start (the HTTPS fake has no plain control port).
for (const n of (process.env.FAKE_BUCKETS || '').split(',').filter(Boolean))
  buckets.set(n, { name: n, objects: new Map(), cfg: { ubla: true, pap: 'enforced', versioning: false } });
const scheme = tls ? 'https' : 'http';
const handler = (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const qi = req.url.indexOf('?');
    const rawPath = qi < 0 ? req.url : req.url.slice(0, qi);
    const q = parseQuery(qi < 0 ? '' : req.url.slice(qi + 1));
    if (rawPath.startsWith('/__ctl/')) return control(req, res, rawPath, q);
    if (rawPath === '/token' && req.method === 'POST') {
      if (injectFault(req, res, 'token')) return;
      return tokenEndpoint(req, res, body);
    }
    stats.requests++;
    if (injectFault(req, res, 'storage')) return;
    if (!authorised(req)) return gerror(res, 401, 'authError', 'Invalid Credentials');
    let m = /^\/upload\/storage\/v1\/b\/([^/]+)\/o$/.exec(rawPath);
    if (m && req.method === 'POST') {
      const b = buckets.get(decodeURIComponent(m[1]));
      return b ? upload(req, res, b, q, body) : gerror(res, 404, 'notFound', 'The specified bucket does not exist.');
    }
    m = /^\/storage\/v1\/b\/([^/]+)(\/o(?:\/(.+))?)?$/.exec(rawPath);
    if (!m) return gerror(res, 404, 'notFound', 'unknown path');
    const b = buckets.get(decodeURIComponent(m[1]));
    if (!b) return gerror(res, 404, 'notFound', 'The specified bucket does not exist.');
    if (!m[2]) return req.method === 'GET' ? bucketGet(res, b) : gerror(res, 405, 'methodNotAllowed');
    if (m[3] === undefined) return req.method === 'GET' ? list(req, res, b, q) : gerror(res, 405, 'methodNotAllowed');
    return objectOp(req, res, b, decodeURIComponent(m[3]), q);
  });
};
const server = tls ? require('https').createServer(tls, handler) : http.createServer(handler);
server.keepAliveTimeout = 30000;
server.listen(0, '127.0.0.1', () => {
  port = server.address().port;
  process.stdout.write(`${port}\n`);
});
