// tests/objects/fake_azure.js — a small loopback Azure Blob service for the
// provider tests: the behaviour no installable server gives here (blob
// versioning; Azurite has none), plus switches for probe refusals and fault
// injection. Faithful where the provider depends on it: Shared Key signatures
// are verified (string-to-sign rebuilt from the raw request, x-ms-date within
// 15 minutes), account SAS tokens are verified (signature, expiry), Content-MD5
// is checked, version IDs are write-unique timestamps, Put Blob with
// If-None-Match: * answers 409 BlobAlreadyExists, reads and deletes take
// ?versionid=, List Blobs pages with opaque markers and include=versions,
// x-ms-range gives 206/416. Node's single thread makes each conditional write
// atomic. Path style, as Azurite: /ACCOUNT/CONTAINER/BLOB.
//
// Usage: node fake_azure.js ACCOUNT BASE64KEY; prints the port.
// Control (unsigned) on /__ctl/...:
//   POST /__ctl/container?name=C&versioning=1|0&public=container|blob
//   POST /__ctl/set?container=C&ignore_inm=1|conflict412=1
//   POST /__ctl/fault?mode=503|429|truncate|hang|reset|skew|lose|short|corrupt&count=N&retry_after=S
//     lose: a Put Blob (not a probe blob) is answered 201 with an invented x-ms-version-id and nothing is stored;
//     short: the version stored lacks the body's last byte; corrupt: one body byte is
//     flipped in transit (the Content-MD5 check then refuses it)
//   GET  /__ctl/stats -> {"requests":N,"current":N,"versions":N}
'use strict';
const http = require('http');
const crypto = require('crypto');

const [ACCOUNT, KEY64] = process.argv.slice(2);
const KEY = Buffer.from(KEY64, 'base64');
const containers = new Map(); // name -> {versioning, pub, cfg, blobs: Map(name -> {versions: [..], current: id|null})}
let fault = { mode: null, count: 0, retryAfter: null };
let requests = 0;
let lastStamp = 0;

const xmlEsc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const md5b64 = (b) => crypto.createHash('md5').update(b).digest('base64');

function send(res, status, body, headers) {
  const b = Buffer.from(body || '');
  res.writeHead(status, Object.assign({ 'Content-Length': b.length, 'Content-Type': 'application/xml', 'x-ms-request-id': crypto.randomUUID() }, headers || {}));
  res.end(b);
}
function error(res, status, code, detail) {
  const d = detail ? `<AuthenticationErrorDetail>${xmlEsc(detail)}</AuthenticationErrorDetail>` : '';
  send(res, status, `<?xml version="1.0" encoding="utf-8"?><Error><Code>${code}</Code><Message>fake message</Message>${d}</Error>`,
    { 'x-ms-error-code': code });
}

function parseQuery(raw) {
  const out = [];
  if (!raw) return out;
  for (const part of raw.split('&')) {
    if (!part) continue;
    const i = part.indexOf('=');
    out.push([decodeURIComponent(i < 0 ? part : part.slice(0, i)), decodeURIComponent(i < 0 ? '' : part.slice(i + 1))]);
  }
  return out;
}

// Version IDs are timestamps with 7 fractional digits, strictly increasing (write-unique).
function newVersionId() {
  let t = Date.now() * 10000;
  if (t <= lastStamp) t = lastStamp + 1;
  lastStamp = t;
  const ms = Math.floor(t / 10000);
  const frac = String(t % 10000000).padStart(7, '0');
  return new Date(ms).toISOString().slice(0, 19) + '.' + frac + 'Z';
}
const VERSION_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}Z$/;

// Shared Key or account SAS; returns null when fine, else [status, code, detail].
function authenticate(req, rawPath, query) {
  const auth = req.headers['authorization'];
  const q = new Map(query);
  if (!auth && q.has('sig')) {
    const f = (k) => q.get(k) || '';
    if (f('ss').indexOf('b') < 0) return [403, 'AuthorizationServiceMismatch'];
    const sts = [ACCOUNT, f('sp'), f('ss'), f('srt'), f('st'), f('se'), f('sip'), f('spr'), f('sv'), f('ses'), ''].join('\n');
    const sig = crypto.createHmac('sha256', KEY).update(sts, 'utf8').digest('base64');
    if (sig !== f('sig')) return [403, 'AuthenticationFailed', 'Signature did not match'];
    const se = Date.parse(f('se'));
    if (!(se > Date.now())) return [403, 'AuthenticationFailed', 'Signature not valid in the specified time frame'];
    return null;
  }
  if (!auth) return [403, 'NoAuthenticationInformation'];
  const m = /^SharedKey ([^:]+):(.+)$/.exec(auth);
  if (!m || m[1] !== ACCOUNT) return [403, 'AuthenticationFailed', 'account'];
  const date = req.headers['x-ms-date'];
  if (!date) return [403, 'AuthenticationFailed', 'Request date header not specified'];
  if (!(Math.abs(Date.now() - Date.parse(date)) < 15 * 60 * 1000) || fault.mode === 'skew')
    return [403, 'AuthenticationFailed', 'Request date header too old'];
  const h = (n) => (req.headers[n] === undefined ? '' : String(req.headers[n]));
  const cl = h('content-length') === '0' ? '' : h('content-length');
  const lines = [req.method, h('content-encoding'), h('content-language'), cl, h('content-md5'), h('content-type'), h('date'),
    h('if-modified-since'), h('if-match'), h('if-none-match'), h('if-unmodified-since'), h('range')];
  const ms = Object.keys(req.headers).filter((n) => n.startsWith('x-ms-')).sort();
  let sts = lines.join('\n') + '\n' + ms.map((n) => `${n}:${h(n).trim()}\n`).join('');
  sts += `/${ACCOUNT}${decodeURIComponent(rawPath)}`;
  const names = [...new Set(query.map(([k]) => k.toLowerCase()))].sort();
  for (const n of names) sts += `\n${n}:${query.filter(([k]) => k.toLowerCase() === n).map(([, v]) => v).sort().join(',')}`;
  const sig = crypto.createHmac('sha256', KEY).update(sts, 'utf8').digest('base64');
  if (sig !== m[2]) return [403, 'AuthenticationFailed', 'Signature did not match'];
  return null;
}

const current = (b) => (b && b.current !== null ? b.versions.find((v) => v.id === b.current) : null);

function blobHeaders(c, b, v) {
  const h = { ETag: v.etag, 'Content-Type': v.ct, 'Last-Modified': v.modified, 'Accept-Ranges': 'bytes', 'x-ms-blob-type': 'BlockBlob' };
  if (c.versioning) {
    h['x-ms-version-id'] = v.id;
    h['x-ms-is-current-version'] = String(b.current === v.id);
  }
  return h;
}

function containerOp(req, res, c, q) {
  if (req.method !== 'GET') return error(res, 405, 'UnsupportedHttpVerb');
  if (q.get('restype') === 'container' && q.get('comp') === 'list') {
    const prefix = q.get('prefix') || '';
    const max = Math.min(5000, parseInt(q.get('maxresults') || '5000', 10));
    const withVersions = (q.get('include') || '').split(',').includes('versions');
    const names = [...c.blobs.keys()].filter((k) => k.startsWith(prefix)).sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    const items = [];
    for (const n of names) {
      const b = c.blobs.get(n);
      for (const v of b.versions) {
        if (!withVersions && b.current !== v.id) continue;
        items.push({ n, v, cur: b.current === v.id });
      }
    }
    let start = 0;
    const marker = q.get('marker');
    if (marker) {
      let mk;
      try { mk = JSON.parse(Buffer.from(marker, 'base64').toString()); } catch (e) { return error(res, 400, 'OutOfRangeInput'); }
      if (!Array.isArray(mk)) return error(res, 400, 'OutOfRangeInput');
      start = items.findIndex((it) => { const c2 = Buffer.compare(Buffer.from(it.n), Buffer.from(mk[0])); return c2 > 0 || (c2 === 0 && String(it.v.id) >= String(mk[1])); });
      if (start < 0) start = items.length;
    }
    const page = items.slice(start, start + max);
    const nextItem = items[start + max];
    let x = `<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint="http://127.0.0.1/${ACCOUNT}" ContainerName="c"><Prefix>${xmlEsc(prefix)}</Prefix><MaxResults>${max}</MaxResults><Blobs>`;
    for (const it of page) {
      x += `<Blob><Name>${xmlEsc(it.n)}</Name>`;
      if (withVersions && c.versioning) x += `<VersionId>${it.v.id}</VersionId>` + (it.cur ? '<IsCurrentVersion>true</IsCurrentVersion>' : '');
      x += `<Properties><Last-Modified>${it.v.modified}</Last-Modified><Etag>${it.v.etag}</Etag><Content-Length>${it.v.data.length}</Content-Length><Content-Type>${xmlEsc(it.v.ct)}</Content-Type><BlobType>BlockBlob</BlobType></Properties></Blob>`;
    }
    x += '</Blobs>';
    x += nextItem ? `<NextMarker>${Buffer.from(JSON.stringify([nextItem.n, nextItem.v.id])).toString('base64')}</NextMarker>` : '<NextMarker />';
    return send(res, 200, x + '</EnumerationResults>');
  }
  if (q.get('restype') === 'container' && !q.get('comp')) {
    const h = { ETag: '"0x8D000000000"', 'Last-Modified': new Date().toUTCString() };
    if (c.pub) h['x-ms-blob-public-access'] = c.pub;
    return send(res, 200, '', h);
  }
  return error(res, 400, 'InvalidQueryParameterValue');
}

function blobOp(req, res, c, name, q, body) {
  let b = c.blobs.get(name);
  const vid = q.get('versionid');
  if (vid !== undefined && !VERSION_RE.test(vid)) return error(res, 400, 'InvalidQueryParameterValue');
  if (req.method === 'PUT') {
    if (req.headers['x-ms-blob-type'] !== 'BlockBlob') return error(res, 400, 'MissingRequiredHeader');
    if (fault.mode === 'corrupt' && fault.count > 0 && body.length) fault.count--, (body[0] ^= 1);
    if (fault.mode === 'lose' && fault.count > 0 && !name.includes('/.adcp-probe/')) {
      fault.count--;
      return send(res, 201, '', { ETag: '"0x0"', 'x-ms-version-id': newVersionId() });
    }
    if (req.headers['content-md5'] && req.headers['content-md5'] !== md5b64(body)) return error(res, 400, 'Md5Mismatch');
    if (fault.mode === 'short' && fault.count > 0) fault.count--, (body = body.subarray(0, Math.max(0, body.length - 1)));
    const cur = current(b);
    if (req.headers['if-none-match'] === '*' && cur && !c.cfg.ignore_inm)
      return c.cfg.conflict412 ? error(res, 412, 'ConditionNotMet') : error(res, 409, 'BlobAlreadyExists');
    if (req.headers['if-match'] && (!cur || req.headers['if-match'] !== cur.etag)) return error(res, 412, 'ConditionNotMet');
    const v = { id: c.versioning ? newVersionId() : null, data: body, md5: md5b64(body), etag: `"0x${crypto.randomBytes(8).toString('hex').toUpperCase()}"`,
      ct: req.headers['content-type'] || 'application/octet-stream', modified: new Date().toUTCString() };
    if (!b) b = { versions: [], current: null };
    if (!c.versioning) b.versions = [];
    b.versions.push(v);
    b.current = v.id;
    c.blobs.set(name, b);
    const h = { ETag: v.etag, 'Content-MD5': v.md5, 'Last-Modified': v.modified };
    if (c.versioning) h['x-ms-version-id'] = v.id;
    return send(res, 201, '', h);
  }
  if (req.method === 'GET' || req.method === 'HEAD') {
    let v;
    if (vid !== undefined) {
      v = b ? b.versions.find((x) => x.id === vid) : null;
    } else {
      v = current(b);
    }
    if (!v) return req.method === 'HEAD' ? send(res, 404, '', { 'x-ms-error-code': 'BlobNotFound' }) : error(res, 404, 'BlobNotFound');
    const h = blobHeaders(c, b, v);
    let data = v.data;
    let status = 200;
    const range = req.headers['x-ms-range'] || req.headers['range'];
    if (range && req.method === 'GET') {
      const m = /^bytes=(\d+)-(\d*)$/.exec(range);
      if (m) {
        const start = +m[1];
        const end = m[2] === '' ? data.length - 1 : Math.min(+m[2], data.length - 1);
        if (start >= data.length) return error(res, 416, 'InvalidRange');
        h['Content-Range'] = `bytes ${start}-${end}/${data.length}`;
        data = data.subarray(start, end + 1);
        status = 206;
      }
    } else {
      h['Content-MD5'] = v.md5; // a property stored at write time, as in Azure (not hashed per read)
    }
    if (req.method === 'HEAD') {
      res.writeHead(status, Object.assign(h, { 'Content-Length': data.length }));
      return res.end();
    }
    if (fault.mode === 'truncate' && fault.count > 0) {
      fault.count--;
      res.writeHead(status, Object.assign(h, { 'Content-Length': data.length + 100 }));
      res.write(data);
      return setTimeout(() => res.socket && res.socket.destroy(), 20);
    }
    res.writeHead(status, Object.assign(h, { 'Content-Length': data.length }));
    return res.end(data);
  }
  if (req.method === 'DELETE') {
    if (vid !== undefined) {
      const i = b ? b.versions.findIndex((x) => x.id === vid) : -1;
      if (i < 0) return error(res, 404, 'BlobNotFound');
      // The current version is removed by deleting the base blob, never by its versionid.
      if (b.current === vid) return error(res, 409, 'OperationNotAllowedOnRootBlob');
      b.versions.splice(i, 1);
      if (!b.versions.length) c.blobs.delete(name);
      return send(res, 202, '');
    }
    const cur = current(b);
    if (!cur) return error(res, 404, 'BlobNotFound');
    if (req.headers['if-match'] && req.headers['if-match'] !== cur.etag) return error(res, 412, 'ConditionNotMet');
    if (c.versioning) b.current = null; // the current version becomes a previous version
    else c.blobs.delete(name);
    return send(res, 202, '');
  }
  return error(res, 405, 'UnsupportedHttpVerb');
}

function control(req, res, path, q) {
  const get = (k) => q.get(k);
  if (path === '/__ctl/stats') {
    let cur = 0, vers = 0;
    for (const c of containers.values()) for (const b of c.blobs.values()) { vers += b.versions.length; if (b.current !== null) cur++; }
    return send(res, 200, JSON.stringify({ requests, current: cur, versions: vers }));
  }
  if (path === '/__ctl/container') {
    containers.set(get('name'), { versioning: get('versioning') !== '0', pub: get('public') || null, cfg: {}, blobs: new Map() });
    return send(res, 200, '');
  }
  if (path === '/__ctl/set') {
    const c = containers.get(get('container'));
    if (!c) return send(res, 404, '');
    for (const k of ['ignore_inm', 'conflict412']) if (q.has(k)) c.cfg[k] = get(k) === '1';
    return send(res, 200, '');
  }
  if (path === '/__ctl/fault') {
    fault = { mode: get('mode') || null, count: parseInt(get('count') || '0', 10), retryAfter: get('retry_after') || null };
    return send(res, 200, '');
  }
  return send(res, 404, '');
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const url = req.url;
    const qi = url.indexOf('?');
    const rawPath = qi < 0 ? url : url.slice(0, qi);
    const query = parseQuery(qi < 0 ? '' : url.slice(qi + 1));
    const q = new Map(query);
    if (rawPath.startsWith('/__ctl/')) return control(req, res, rawPath, q);
    requests++;
    if (fault.count > 0 && (fault.mode === '503' || fault.mode === '429')) {
      fault.count--;
      const h = fault.retryAfter ? { 'Retry-After': fault.retryAfter } : {};
      return send(res, +fault.mode, '<Error><Code>ServerBusy</Code><Message>secret-looking body text</Message></Error>', h);
    }
    if (fault.count > 0 && fault.mode === 'hang') {
      fault.count--;
      return; // never answer
    }
    if (fault.count > 0 && fault.mode === 'reset') {
      fault.count--;
      return req.socket.destroy();
    }
    const bad = authenticate(req, rawPath, query);
    if (bad) return error(res, bad[0], bad[1], bad[2]);
    const parts = rawPath.split('/'); // ['', ACCOUNT, container, ...blob]
    if (parts[1] !== ACCOUNT) return error(res, 400, 'InvalidUri');
    const c = containers.get(decodeURIComponent(parts[2] || ''));
    if (!c) return error(res, 404, 'ContainerNotFound');
    const name = decodeURIComponent(parts.slice(3).join('/'));
    if (!name) return containerOp(req, res, c, q);
    return blobOp(req, res, c, name, q, body);
  });
});
server.keepAliveTimeout = 30000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
