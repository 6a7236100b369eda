// tests/objects/fake_s3.js — a small loopback S3 for the provider tests: the
// behaviour no installable server gives here (versioned buckets that enforce
// If-None-Match: *, as AWS S3 does), plus switches for probe refusals and
// fault injection. Faithful where the provider depends on it: SigV4 is
// verified (canonical request rebuilt from the raw request, payload hash
// checked, clock skew limit), version IDs are write-unique, ListObjectVersions
// pages with key/version markers, ranges give 206/416. Node's single thread
// makes each conditional write atomic.
//
// Usage: node fake_s3.js ACCESS_KEY SECRET [SESSION_TOKEN]; prints the port.
// With FAKE_TLS_CERT/FAKE_TLS_KEY set it serves HTTPS.
// Control (unsigned) on /__ctl/...: POST /__ctl/bucket?name=B&versioning=Enabled|Suspended|none
//   POST /__ctl/set?bucket=B&lifecycle=<xml>|acl_public=1|policy_public=1|ignore_inm=1|list_stale=1|age_ms=N
//     (list_stale: ListObjectVersions leaves out each key's newest version, a lagging listing)
//   POST /__ctl/fault?mode=503|429|truncate|hang|reset|skew|expired|lose|short|corrupt&count=N&retry_after=S
//     lose: an object PUT (not a probe key) is answered 200 with an invented VersionId and nothing is stored;
//     short: the version stored lacks the body's last byte; corrupt: one body byte is
//     flipped in transit (the payload hash check then refuses it)
//   POST /__ctl/puts?delay_ms=D&fail_at=K: from now every PUT is answered D ms
//     late and the K-th PUT (1-based, 0 = none) is refused 403; resets the counters
//   GET /__ctl/stats -> {"requests":N,"puts":P,"putsMaxInFlight":M}
'use strict';
const http = require('http');
const crypto = require('crypto');

const [AK, SK, TOKEN] = process.argv.slice(2);
const buckets = new Map(); // name -> {versioning, objects: Map(key -> [versions oldest..newest]), cfg}
let fault = { mode: null, count: 0, retryAfter: null };
let requests = 0;
let puts = 0, putDelayMs = 0, putFailAt = 0, putsInFlight = 0, putsMaxInFlight = 0;
// FAKE_BUCKETS=a,b: versioned buckets that exist from the start (for the HTTPS fake, which has no plain control port).
for (const n of (process.env.FAKE_BUCKETS || '').split(',').filter(Boolean)) buckets.set(n, { versioning: 'Enabled', objects: new Map(), cfg: {} });

const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');
const hmac = (k, m) => crypto.createHmac('sha256', k).update(m).digest();
const enc = (s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
const xmlEsc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function send(res, status, body, headers) {
  const b = Buffer.from(body || '');
  res.writeHead(status, Object.assign({ 'Content-Length': b.length, 'Content-Type': 'application/xml' }, headers || {}));
  res.end(b);
}
const error = (res, status, code) =>
  send(res, status, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>fake</Message></Error>`);

function parseQuery(raw) {
  const out = [];
  if (!raw) return out;
  for (const part of raw.split('&')) {
    if (!part) continue;
    const i = part.indexOf('=');
    const k = decodeURIComponent(i < 0 ? part : part.slice(0, i));
    const v = decodeURIComponent(i < 0 ? '' : part.slice(i + 1).replace(/\+/g, '%20'));
    out.push([k, v]);
  }
  return out;
}

// SigV4 check; returns null when fine, else [status, code].
function verify(req, rawPath, rawQuery, body) {
  const auth = req.headers['authorization'] || '';
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) return [403, 'AccessDenied'];
  const [, ak, date, region, signed, sig] = m;
  if (ak !== AK) return [403, 'InvalidAccessKeyId'];
  const amzDate = req.headers['x-amz-date'] || '';
  const t = Date.UTC(+amzDate.slice(0, 4), +amzDate.slice(4, 6) - 1, +amzDate.slice(6, 8), +amzDate.slice(9, 11),
    +amzDate.slice(11, 13), +amzDate.slice(13, 15));
  if (!(Math.abs(Date.now() - t) < 15 * 60 * 1000) || fault.mode === 'skew') return [403, 'RequestTimeTooSkewed'];
  if (TOKEN || req.headers['x-amz-security-token']) {
    if (fault.mode === 'expired') return [400, 'ExpiredToken'];
    if (req.headers['x-amz-security-token'] !== TOKEN) return [403, 'InvalidToken'];
    if (!signed.split(';').includes('x-amz-security-token')) return [403, 'AccessDenied'];
  }
  const payload = req.headers['x-amz-content-sha256'];
  if (!payload) return [400, 'MissingSecurityHeader'];
  if (payload !== 'UNSIGNED-PAYLOAD' && payload !== sha(body)) return [400, 'XAmzContentSHA256Mismatch'];
  const q = parseQuery(rawQuery).map(([k, v]) => [enc(k), enc(v)]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : 1));
  const canonQuery = q.map(([k, v]) => `${k}=${v}`).join('&');
  const names = signed.split(';');
  if (!names.includes('host')) return [403, 'AccessDenied'];
  const canonHeaders = names.map((n) => `${n}:${String(req.headers[n] || '').trim()}\n`).join('');
  const creq = [req.method, rawPath, canonQuery, canonHeaders, signed, payload].join('\n');
  const sts = ['AWS4-HMAC-SHA256', amzDate, `${date}/${region}/s3/aws4_request`, sha(creq)].join('\n');
  let k = hmac('AWS4' + SK, date);
  for (const part of [region, 's3', 'aws4_request']) k = hmac(k, part);
  if (crypto.createHmac('sha256', k).update(sts).digest('hex') !== sig) return [403, 'SignatureDoesNotMatch'];
  return null;
}

const current = (vs) => (vs && vs.length ? vs[vs.length - 1] : null);
const newVersionId = () => crypto.randomBytes(12).toString('base64').replace(/\+/g, '.').replace(/\//g, '_');

function bucketOp(req, res, b, q, body) {
  if (req.method !== 'GET') return error(res, 405, 'MethodNotAllowed');
  if (q.has('versioning')) {
    const st = b.versioning ? `<Status>${b.versioning}</Status>` : '';
    return send(res, 200, `<?xml version="1.0" encoding="UTF-8"?><VersioningConfiguration>${st}</VersioningConfiguration>`);
  }
  if (q.has('lifecycle')) {
    if (!b.cfg.lifecycle) return error(res, 404, 'NoSuchLifecycleConfiguration');
    return send(res, 200, b.cfg.lifecycle);
  }
  if (q.has('policyStatus')) {
    if (!b.cfg.policy_public) return error(res, 404, 'NoSuchBucketPolicy');
    return send(res, 200, '<PolicyStatus><IsPublic>true</IsPublic></PolicyStatus>');
  }
  if (q.has('acl')) {
    const pub = b.cfg.acl_public
      ? '<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group"><URI>http://acs.amazonaws.com/groups/global/AllUsers</URI></Grantee><Permission>READ</Permission></Grant>'
      : '';
    return send(res, 200, `<AccessControlPolicy><Owner><ID>o</ID></Owner><AccessControlList><Grant><Grantee><ID>o</ID></Grantee><Permission>FULL_CONTROL</Permission></Grant>${pub}</AccessControlList></AccessControlPolicy>`);
  }
  if (q.has('versions')) {
    const prefix = q.get('prefix') || '';
    const max = Math.min(1000, parseInt(q.get('max-keys') || '1000', 10));
    const km = q.get('key-marker');
    const vm = q.get('version-id-marker');
    const keys = [...b.objects.keys()].filter((k) => k.startsWith(prefix)).sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    const rows = [];
    for (const k of keys) {
      if (km !== undefined && Buffer.compare(Buffer.from(k), Buffer.from(km)) < 0) continue;
      let vs = b.objects.get(k).slice().reverse(); // newest first
      if (b.cfg.list_stale) vs = vs.slice(1); // a listing that lags: the newest version is not shown yet
      let skipping = km !== undefined && k === km;
      if (skipping && !vm) continue; // key-marker alone: strictly after that key
      for (let i = 0; i < vs.length; i++) {
        if (skipping) {
          if (vs[i].id === vm) skipping = false;
          continue;
        }
        rows.push({ k, v: vs[i], latest: i === 0 });
      }
    }
    const page = rows.slice(0, max);
    const truncated = rows.length > max;
    let x = `<?xml version="1.0" encoding="UTF-8"?><ListVersionsResult><Name>b</Name><Prefix>${xmlEsc(prefix)}</Prefix><MaxKeys>${max}</MaxKeys><IsTruncated>${truncated}</IsTruncated>`;
    if (truncated) {
      const last = page[page.length - 1];
      x += `<NextKeyMarker>${xmlEsc(last.k)}</NextKeyMarker><NextVersionIdMarker>${xmlEsc(last.v.id)}</NextVersionIdMarker>`;
    }
    for (const r of page) {
      const tag = r.v.marker ? 'DeleteMarker' : 'Version';
      x += `<${tag}><Key>${xmlEsc(r.k)}</Key><VersionId>${xmlEsc(r.v.id)}</VersionId><IsLatest>${r.latest}</IsLatest>` +
        (r.v.marker ? '' : `<ETag>"${r.v.etag}"</ETag><Size>${r.v.data.length}</Size><LastModified>${new Date(r.v.mtime || Date.now()).toISOString()}</LastModified>`) + `</${tag}>`;
    }
    return send(res, 200, x + '</ListVersionsResult>');
  }
  return error(res, 501, 'NotImplemented');
}

function findVersion(vs, id) {
  if (!vs) return null;
  return vs.find((v) => v.id === id) || null;
}

function objectOp(req, res, b, key, q, body) {
  const vs = b.objects.get(key);
  const vid = q.get('versionId');
  if (req.method === 'PUT') {
    // x-amz-checksum-sha256 (base64), checked when sent, as AWS S3 does.
    const ck = req.headers['x-amz-checksum-sha256'];
    if (ck !== undefined && ck !== crypto.createHash('sha256').update(body).digest('base64')) return error(res, 400, 'BadDigest');
    if (fault.mode === 'lose' && fault.count > 0 && !key.includes('/.adcp-probe/')) {
      fault.count--;
      return send(res, 200, '', { ETag: '"0"', 'x-amz-version-id': newVersionId() });
    }
    if (fault.mode === 'short' && fault.count > 0) {
      fault.count--;
      body = body.subarray(0, Math.max(0, body.length - 1));
    }
    const cur = current(vs);
    if (req.headers['if-none-match'] === '*' && cur && !cur.marker && !b.cfg.ignore_inm) return error(res, 412, 'PreconditionFailed');
    const v = { id: b.versioning === 'Enabled' ? newVersionId() : 'null', data: body, etag: crypto.createHash('md5').update(body).digest('hex'),
      ct: req.headers['content-type'] || 'binary/octet-stream', mtime: Date.now() - (b.cfg.age_ms || 0) };
    const list = b.versioning === 'Enabled' ? (vs || []) : [];
    list.push(v);
    b.objects.set(key, list);
    const h = { ETag: `"${v.etag}"` };
    if (b.versioning === 'Enabled') h['x-amz-version-id'] = v.id;
    return send(res, 200, '', h);
  }
  if (req.method === 'GET' || req.method === 'HEAD') {
    let v;
    if (vid !== undefined) {
      if (!/^[A-Za-z0-9._-]{16}$/.test(vid) && vid !== 'null') return error(res, 400, 'InvalidArgument');
      v = findVersion(vs, vid);
      if (!v) return req.method === 'HEAD' ? send(res, 404, '') : error(res, 404, 'NoSuchVersion');
      if (v.marker) return error(res, 405, 'MethodNotAllowed');
    } else {
      v = current(vs);
      if (!v || v.marker) return req.method === 'HEAD' ? send(res, 404, '') : error(res, 404, 'NoSuchKey');
    }
    const h = { 'Content-Type': v.ct, ETag: `"${v.etag}"`, 'Accept-Ranges': 'bytes' };
    if (b.versioning) h['x-amz-version-id'] = v.id;
    let data = v.data;
    let status = 200;
    const range = req.headers['range'];
    if (range && req.method === 'GET') {
      const m = /^bytes=(\d+)-(\d*)$/.exec(range);
      if (m) {
        const start = +m[1];
        let end = m[2] === '' ? data.length - 1 : Math.min(+m[2], data.length - 1);
        if (start >= data.length) return send(res, 416, '', { 'Content-Range': `bytes */${data.length}` });
        h['Content-Range'] = `bytes ${start}-${end}/${data.length}`;
        data = data.subarray(start, end + 1);
        status = 206;
      }
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
      if (!vs) return send(res, 204, '');
      const i = vs.findIndex((v) => v.id === vid);
      if (i >= 0) vs.splice(i, 1);
      if (!vs.length) b.objects.delete(key);
      return send(res, 204, '', { 'x-amz-version-id': vid });
    }
    if (b.versioning === 'Enabled') {
      const m = { id: newVersionId(), marker: true };
      b.objects.set(key, (vs || []).concat([m]));
      return send(res, 204, '', { 'x-amz-version-id': m.id, 'x-amz-delete-marker': 'true' });
    }
    b.objects.delete(key);
    return send(res, 204, '');
  }
  return error(res, 405, 'MethodNotAllowed');
}

function control(req, res, path, q) {
  const get = (k) => q.get(k);
  if (path === '/__ctl/stats') return send(res, 200, JSON.stringify({ requests, puts, putsMaxInFlight }));
  if (path === '/__ctl/puts') {
    putDelayMs = parseInt(get('delay_ms') || '0', 10);
    putFailAt = parseInt(get('fail_at') || '0', 10);
    puts = 0, putsMaxInFlight = putsInFlight;
    return send(res, 200, '');
  }
  if (path === '/__ctl/bucket') {
    const v = get('versioning');
    buckets.set(get('name'), { versioning: v === 'none' ? null : v || 'Enabled', objects: new Map(), cfg: {} });
    return send(res, 200, '');
  }
  if (path === '/__ctl/set') {
    const b = buckets.get(get('bucket'));
    if (!b) return send(res, 404, '');
    for (const k of ['lifecycle', 'acl_public', 'policy_public', 'ignore_inm', 'list_stale']) if (q.has(k)) b.cfg[k] = k === 'lifecycle' ? get(k) : get(k) === '1';
    // age_ms=N: objects written from now on report a LastModified N ms in the past (collector age tests)
    if (q.has('age_ms')) b.cfg.age_ms = Number(get('age_ms')) || 0;
    return send(res, 200, '');
  }
  if (path === '/__ctl/fault') {
    fault = { mode: get('mode') || null, count: parseInt(get('count') || '0', 10), retryAfter: get('retry_after') || null };
    return send(res, 200, '');
  }
  return send(res, 404, '');
}

// FAKE_TLS_CERT / FAKE_TLS_KEY (PEM files): serve HTTPS instead.
const tls = process.env.FAKE_TLS_CERT
  ? { cert: require('fs').readFileSync(process.env.FAKE_TLS_CERT), key: require('fs').readFileSync(process.env.FAKE_TLS_KEY) }
  : null;
const handler = (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const url = req.url;
    const qi = url.indexOf('?');
    const rawPath = qi < 0 ? url : url.slice(0, qi);
    const rawQuery = qi < 0 ? '' : url.slice(qi + 1);
    const q = new Map(parseQuery(rawQuery));
    if (rawPath.startsWith('/__ctl/')) return control(req, res, rawPath, q);
    requests++;
    if (req.method === 'PUT') {
      // Delayed answers show how many PUTs a client keeps in flight at once.
      puts++;
      if (putDelayMs > 0) {
        putsMaxInFlight = Math.max(putsMaxInFlight, ++putsInFlight);
        const end = res.end.bind(res);
        res.end = (...a) => setTimeout(() => { putsInFlight--; end(...a); }, putDelayMs);
      }
      if (putFailAt && puts === putFailAt) return error(res, 403, 'AccessDenied');
    }
    if (fault.count > 0 && (fault.mode === '503' || fault.mode === '429')) {
      fault.count--;
      const h = fault.retryAfter ? { 'Retry-After': fault.retryAfter } : {};
      return send(res, +fault.mode, '<Error><Code>SlowDown</Code><Message>secret-looking body text</Message></Error>', h);
    }
    if (fault.count > 0 && fault.mode === 'hang') {
      fault.count--;
      return; // never answer
    }
    if (fault.count > 0 && fault.mode === 'reset') {
      fault.count--;
      return req.socket.destroy();
    }
    if (fault.mode === 'corrupt' && fault.count > 0 && req.method === 'PUT' && body.length) {
      fault.count--;
      body[0] ^= 1;
    }
    const bad = verify(req, rawPath, rawQuery, body);
    if (bad) return error(res, bad[0], bad[1]);
    // Virtual-host style: "<bucket>.localhost:port"; else path style "/<bucket>/<key>".
    const host = (req.headers.host || '').split(':')[0];
    let bucket, key;
    if (host.endsWith('.localhost')) {
      bucket = host.slice(0, -'.localhost'.length);
      key = decodeURIComponent(rawPath.slice(1));
    } else {
      const p = rawPath.slice(1);
      const s = p.indexOf('/');
      bucket = decodeURIComponent(s < 0 ? p : p.slice(0, s));
      key = s < 0 ? '' : decodeURIComponent(p.slice(s + 1));
    }
    const b = buckets.get(bucket);
    if (!b) return error(res, 404, 'NoSuchBucket');
    if (!key) return bucketOp(req, res, b, q, body);
    return objectOp(req, res, b, key, q, body);
  });
};
const server = tls ? require('https').createServer(tls, handler) : http.createServer(handler);
server.keepAliveTimeout = 30000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${server.address().port}\n`);
});
