// ipcsim's browser viewer (ipcsim/viewer.py writes the page; data layout in its docstring, usage in docs/viewer.md).
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/OrbitControls.js';

const D = JSON.parse(document.getElementById('ipcsim-data').textContent);
const $ = (id) => document.getElementById(id);
const api = { ready: false, error: null, nFrames: D.nFrames, times: D.times };
window.ipcsimViewer = api;

async function inflate(b64) {  // zlib (RFC 1950) base64 -> bytes, with the browser's own inflater
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

const S = { frame: 0, playing: false, playT: 0, last: null, dirty: true, colorMode: 'body', forceBody: 0 };
let renderer, scene, camera, controls, light, meshes = [], Q, codes, lut;
const N3 = D.nVerts * 3;

function srgbToLinear(c) { return c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); }

let position, color;  // shared by every body's geometry: all vertices, in the page's (body-sorted) order

function buildMeshes(faces) {
  position = new THREE.BufferAttribute(new Float32Array(N3), 3);
  color = new THREE.BufferAttribute(new Float32Array(N3), 3);
  let f0 = 0;
  for (const b of D.bodies) {
    const geom = new THREE.BufferGeometry();
    geom.setAttribute('position', position);
    geom.setAttribute('color', color);
    let obj;
    if (b.nf > 0) {
      geom.setIndex(new THREE.BufferAttribute(faces.slice(f0 * 3, (f0 + b.nf) * 3), 1));
      // where two bodies' surfaces coincide (a face run's skin over its collision proxy) the earlier body is drawn
      // in front: each later body is pushed back by a depth offset (invisible where surfaces are apart)
      const k = meshes.length;
      obj = new THREE.Mesh(geom, new THREE.MeshLambertMaterial({ color: b.color, side: THREE.DoubleSide,
        polygonOffset: k > 0, polygonOffsetFactor: k, polygonOffsetUnits: k }));
    } else {
      geom.setIndex(new THREE.BufferAttribute(Uint32Array.from({ length: b.nv }, (_, i) => b.start + i), 1));
      obj = new THREE.Points(geom, new THREE.PointsMaterial({ color: b.color, size: 4, sizeAttenuation: false }));
    }
    f0 += b.nf;
    obj.frustumCulled = false;  // the vertices move: the bounding sphere of frame 0 would cull wrongly
    obj.userData.body = b;
    scene.add(obj);
    meshes.push(obj);
  }
}

function setFrame(k) {
  k = Math.max(0, Math.min(D.nFrames - 1, Math.round(k)));
  S.frame = k;
  const off = k * N3, pos = position.array;
  for (const b of D.bodies) {
    for (let i = 3 * b.start; i < 3 * (b.start + b.nv); i += 3) {
      for (let a = 0; a < 3; a++) pos[i + a] = b.lo[a] + (Q[off + i + a] + 32768) * b.step[a];
    }
  }
  position.needsUpdate = true;
  for (const m of meshes) if (m.isMesh) m.geometry.computeVertexNormals();
  applyColors();
  $('scrub').value = String(k);
  showFrameInfo();
  drawPlotCursor();
  S.dirty = true;
}

function applyColors() {
  const field = S.colorMode === 'distance';
  for (const m of meshes) {
    m.material.vertexColors = field;
    m.material.color.set(field ? 0xffffff : m.userData.body.color);
    m.material.needsUpdate = true;
  }
  if (field) {
    const col = color.array, off = S.frame * D.nVerts;
    for (let i = 0; i < D.nVerts; i++) {
      const c = codes[off + i];
      for (let a = 0; a < 3; a++) col[3 * i + a] = c === 255 ? 0.35 : lut[3 * c + a];
    }
    color.needsUpdate = true;
  }
  $('legend').style.display = field ? 'block' : 'none';
  S.dirty = true;
}

function fmt(v) {
  if (v === null || v === undefined) return '–';
  if (v === 'inf') return '∞';
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 1e-3 && Math.abs(v) < 1e4 ? v.toPrecision(4) : v.toExponential(3);
}

function showFrameInfo() {
  const k = S.frame, t = D.times[k];
  $('frame-label').textContent = `frame ${k} / ${D.nFrames - 1}`;
  $('overlay').textContent = `t = ${t.toFixed(4)} s`;
  const row = D.stats.rows ? D.stats.rows[k] : null;
  let text = `t = ${t.toFixed(4)} s · frame ${k}`;
  if (D.stats.labels && D.stats.labels.length) {
    text += row ? ' · ' + D.stats.labels.map((l, i) => `${l} ${fmt(row[i])}`).join(' · ')
      : ' · (no stats row: the initial state)';
  }
  $('stats').textContent = text;
}

function fitCamera() {
  const lo = new THREE.Vector3(...D.box[0]), hi = new THREE.Vector3(...D.box[1]);
  const c = lo.clone().add(hi).multiplyScalar(0.5), r = Math.max(hi.distanceTo(lo) / 2, 1e-6);
  const az = 35 * Math.PI / 180, el = 25 * Math.PI / 180;
  const dir = new THREE.Vector3(Math.cos(el) * Math.sin(az), Math.sin(el), Math.cos(el) * Math.cos(az));
  const hfov = 2 * Math.atan(Math.tan(camera.fov * Math.PI / 360) * camera.aspect) * 180 / Math.PI;
  const half = Math.min(camera.fov, hfov);
  const dist = r / Math.sin(half * Math.PI / 360);  // the box's bounding sphere fits the view
  camera.position.copy(c).addScaledVector(dir, dist);
  camera.near = dist / 100; camera.far = dist * 100;
  camera.updateProjectionMatrix();
  controls.target.copy(c);
  controls.update();
  S.dirty = true;
}

function addHalfSpaces() {
  const lo = new THREE.Vector3(...D.box[0]), hi = new THREE.Vector3(...D.box[1]);
  const c = lo.clone().add(hi).multiplyScalar(0.5), size = Math.max(hi.distanceTo(lo), 1e-3) * 2;
  for (const h of D.halfSpaces) {
    const n = new THREE.Vector3(...h.normal).normalize(), o = new THREE.Vector3(...h.origin);
    const grid = new THREE.GridHelper(size, 20, 0x888888, 0xcccccc);
    grid.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), n);
    grid.position.copy(c).addScaledVector(n, -c.clone().sub(o).dot(n));
    scene.add(grid);
  }
}

function render() {
  light.position.copy(camera.position);
  light.target.position.copy(controls.target);
  light.target.updateMatrixWorld();
  renderer.render(scene, camera);
  S.dirty = false;
}

function frameAt(t) {  // the last frame whose time is <= t
  let lo = 0, hi = D.nFrames - 1;
  while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (D.times[mid] <= t + 1e-12) lo = mid; else hi = mid - 1; }
  return lo;
}

function setPlaying(on) {
  S.playing = on && D.nFrames > 1;
  if (S.playing && S.frame >= D.nFrames - 1) S.frame = 0;
  S.playT = D.times[S.frame];
  S.last = null;
  $('play').textContent = S.playing ? '❚❚' : '▶';
}

function tick(now) {
  if (S.playing) {
    if (S.last !== null) {
      S.playT += (now - S.last) / 1000 * Number($('speed').value);
      const tEnd = D.times[D.nFrames - 1];
      if (S.playT > tEnd) {
        if ($('loop').checked) S.playT = D.times[0]; else { setFrame(D.nFrames - 1); setPlaying(false); }
      }
      const k = frameAt(S.playT);
      if (S.playing && k !== S.frame) setFrame(k);
    }
    S.last = now;
  }
  if (S.dirty) render();
  requestAnimationFrame(tick);
}

// --------------------------------------------------------------------------------------------- the force plot
const P = { base: null, x0: 0, x1: 1, pad: { l: 58, r: 10, t: 16, b: 20 } };
const FORCE_LINES = [['contact_x', '#d62728', 'x'], ['contact_y', '#2ca02c', 'y'], ['contact_z', '#1f77b4', 'z']];

function forceSeries(b) {
  const s = D.forces[String(b)];
  if (!s) return null;
  const mag = (cx, cy, cz) => s.time.map((_, i) => Math.hypot(s[cx][i] || 0, s[cy][i] || 0, s[cz][i] || 0));
  return { t: s.time, lines: [...FORCE_LINES.map(([c, col, l]) => ({ y: s[c], col, label: l })),
    { y: mag('contact_x', 'contact_y', 'contact_z'), col: '#000', label: '|F|' },
    { y: mag('friction_x', 'friction_y', 'friction_z'), col: '#888', label: '|friction|', dash: true }] };
}

function drawPlot() {
  const cv = $('plot'), dpr = window.devicePixelRatio || 1;
  cv.width = Math.max(1, cv.clientWidth * dpr); cv.height = Math.max(1, cv.clientHeight * dpr);
  const base = document.createElement('canvas');
  base.width = cv.width; base.height = cv.height;
  const g = base.getContext('2d'), W = cv.clientWidth, H = cv.clientHeight, p = P.pad;
  g.scale(dpr, dpr);
  g.font = '11px system-ui, sans-serif';
  const s = forceSeries(S.forceBody);
  P.x0 = D.times[0]; P.x1 = Math.max(D.times[D.nFrames - 1], P.x0 + 1e-9);
  if (!s) {
    g.fillStyle = '#666'; g.fillText('no forces.csv rows for this body', p.l, H / 2);
    P.base = base; drawPlotCursor(); return;
  }
  let ymin = 0, ymax = 0;
  for (const ln of s.lines) {
    for (const v of ln.y) if (v !== null && isFinite(v)) { ymin = Math.min(ymin, v); ymax = Math.max(ymax, v); }
  }
  if (ymax - ymin < 1e-12) { ymax += 1; ymin -= 1; }
  const X = (t) => p.l + (t - P.x0) / (P.x1 - P.x0) * (W - p.l - p.r);
  const Y = (v) => p.t + (ymax - v) / (ymax - ymin) * (H - p.t - p.b);
  g.strokeStyle = '#ccc'; g.beginPath(); g.moveTo(X(P.x0), Y(0)); g.lineTo(X(P.x1), Y(0)); g.stroke();
  g.fillStyle = '#444';
  g.fillText(fmt(ymax) + ' N', 2, p.t + 4); g.fillText(fmt(ymin) + ' N', 2, H - p.b);
  g.fillText(fmt(P.x0) + ' s', p.l, H - 5); g.textAlign = 'right'; g.fillText(fmt(P.x1) + ' s', W - p.r, H - 5);
  g.textAlign = 'left';
  let lx = p.l + 4;
  for (const ln of s.lines) {
    g.strokeStyle = ln.col; g.setLineDash(ln.dash ? [4, 3] : []); g.lineWidth = 1.2; g.beginPath();
    let pen = false;
    s.t.forEach((t, i) => {
      const v = ln.y[i];
      if (v === null || t === null || !isFinite(v)) { pen = false; return; }
      if (pen) g.lineTo(X(t), Y(v)); else g.moveTo(X(t), Y(v));
      pen = true;
    });
    g.stroke();
    g.fillStyle = ln.col; g.fillText(ln.label, lx, 11); lx += g.measureText(ln.label).width + 10;
  }
  g.setLineDash([]);
  g.fillStyle = '#444'; g.fillText(`force on ${D.bodies[S.forceBody].name} [N]`, lx + 10, 11);
  P.base = base;
  drawPlotCursor();
}

function drawPlotCursor() {
  if (!P.base) return;
  const cv = $('plot'), g = cv.getContext('2d'), dpr = window.devicePixelRatio || 1;
  g.setTransform(1, 0, 0, 1, 0, 0);
  g.clearRect(0, 0, cv.width, cv.height);
  g.drawImage(P.base, 0, 0);
  const W = cv.clientWidth, p = P.pad, t = D.times[S.frame];
  const x = (p.l + (t - P.x0) / (P.x1 - P.x0) * (W - p.l - p.r)) * dpr;
  g.strokeStyle = '#e0a000'; g.lineWidth = 2 * dpr; g.beginPath(); g.moveTo(x, 0); g.lineTo(x, cv.height); g.stroke();
}

// --------------------------------------------------------------------------------------------- the side panel
function setVisible(b, on) {
  meshes[b].visible = on;
  $(`show-${b}`).checked = on;
  S.dirty = true;
}

function buildPanel() {
  $('run-name').textContent = D.name;
  const list = $('bodies');
  for (const b of D.bodies) {
    const row = document.createElement('div');
    row.className = 'body';
    row.innerHTML = `<input type="checkbox" class="show" id="show-${b.id}" checked title="show / hide">` +
      `<span class="sw" style="background:${b.color}"></span><span class="nm"></span>` +
      `<button id="isolate-${b.id}" title="show only this body (again: show all)">isolate</button>`;
    row.querySelector('.nm').textContent = b.name + (b.obstacle ? ' (obstacle)' : '');
    row.querySelector('.nm').title = b.name;
    list.appendChild(row);
    $(`show-${b.id}`).addEventListener('change', (e) => setVisible(b.id, e.target.checked));
    $(`isolate-${b.id}`).addEventListener('click', () => {
      const only = meshes.every((m, i) => m.visible === (i === b.id));
      meshes.forEach((_, i) => setVisible(i, only || i === b.id));
    });
    const opt = document.createElement('option');
    opt.value = String(b.id); opt.textContent = b.name;
    $('force-body').appendChild(opt);
  }
  $('show-all').addEventListener('click', () => meshes.forEach((_, i) => setVisible(i, true)));
  document.querySelectorAll('input[name=color]').forEach((r) => r.addEventListener('change', (e) => {
    S.colorMode = e.target.value; applyColors();
  }));
  const hasField = D.bodies.length > 1;
  $('color-distance').disabled = !hasField;
  $('legend-lo').textContent = `≤ ${fmt(D.distance.lo * 1000)} mm`;
  $('legend-hi').textContent = `≥ ${fmt(D.distance.hi * 1000)} mm`;
  const bar = $('legend-bar').getContext('2d'), img = bar.createImageData(256, 1);
  const raw = Uint8Array.from(atob(D.distance.lut), (ch) => ch.charCodeAt(0));
  for (let i = 0; i < 256; i++) { img.data.set([raw[3 * i], raw[3 * i + 1], raw[3 * i + 2], 255], 4 * i); }
  bar.putImageData(img, 0, 0);
  lut = Float32Array.from(raw, (v) => srgbToLinear(v / 255));
  const moving = D.bodies.find((b) => b.moving && !b.obstacle && D.forces[String(b.id)]);
  S.forceBody = moving ? moving.id : 0;
  $('force-body').value = String(S.forceBody);
  $('force-body').addEventListener('change', (e) => { S.forceBody = Number(e.target.value); drawPlot(); });
  if (!Object.keys(D.forces).length) $('plotbox').style.display = 'none';
}

function bindControls() {
  $('scrub').max = String(D.nFrames - 1);
  $('scrub').addEventListener('input', (e) => { setPlaying(false); setFrame(Number(e.target.value)); });
  $('play').addEventListener('click', () => setPlaying(!S.playing));
  $('reset-view').addEventListener('click', fitCamera);
  $('plot').addEventListener('click', (e) => {
    const r = $('plot').getBoundingClientRect(), p = P.pad;
    const t = P.x0 + (e.clientX - r.left - p.l) / (r.width - p.l - p.r) * (P.x1 - P.x0);
    setPlaying(false); setFrame(frameAt(t));
  });
  window.addEventListener('keydown', (e) => {
    if (e.target.tagName === 'SELECT') return;
    if (e.key === ' ') { e.preventDefault(); setPlaying(!S.playing); }
    if (e.key === 'ArrowRight') { setPlaying(false); setFrame(S.frame + 1); }
    if (e.key === 'ArrowLeft') { setPlaying(false); setFrame(S.frame - 1); }
  });
  const resize = () => {
    const v = $('view'), w = v.clientWidth, h = v.clientHeight;
    renderer.setSize(w, h, false);
    camera.aspect = w / Math.max(h, 1); camera.updateProjectionMatrix();
    drawPlot(); S.dirty = true;
  };
  new ResizeObserver(resize).observe($('view'));
  resize();
}

function screenBox(b) {  // [x0, y0, x1, y1] CSS pixels in the page of body b's vertices at the current frame
  const bd = D.bodies[b], pos = position.array.subarray(3 * bd.start, 3 * (bd.start + bd.nv));
  const r = renderer.domElement.getBoundingClientRect();
  const v = new THREE.Vector3(), box = [Infinity, Infinity, -Infinity, -Infinity];
  for (let i = 0; i < pos.length; i += 3) {
    v.set(pos[i], pos[i + 1], pos[i + 2]).project(camera);
    const x = r.left + (v.x + 1) / 2 * r.width, y = r.top + (1 - v.y) / 2 * r.height;
    box[0] = Math.min(box[0], x); box[1] = Math.min(box[1], y);
    box[2] = Math.max(box[2], x); box[3] = Math.max(box[3], y);
  }
  return box;
}

async function main() {
  const [faces, deltas, field] = await Promise.all([inflate(D.faces), inflate(D.positions), inflate(D.distance.codes)]);
  Q = new Int16Array(deltas.buffer, deltas.byteOffset, deltas.byteLength / 2);
  for (let pass = 0; pass < 2; pass++) {  // second differences -> differences -> frames (int16 wraps)
    for (let i = N3; i < Q.length; i++) Q[i] = Q[i - N3] + Q[i];
  }
  codes = field;
  renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  renderer.setClearColor(0xffffff);
  renderer.domElement.id = 'scene3d';
  $('view').appendChild(renderer.domElement);
  scene = new THREE.Scene();
  camera = new THREE.PerspectiveCamera(35, 1, 0.01, 100);
  scene.add(new THREE.HemisphereLight(0xffffff, 0x8a8a90, 1.6));
  light = new THREE.DirectionalLight(0xffffff, 1.6);
  scene.add(light, light.target);
  controls = new OrbitControls(camera, renderer.domElement);
  controls.addEventListener('change', () => { S.dirty = true; });
  buildMeshes(new Uint32Array(faces.buffer, faces.byteOffset, faces.byteLength / 4));
  addHalfSpaces();
  buildPanel();
  bindControls();
  fitCamera();
  setFrame(0);
  render();
  $('message').style.display = 'none';
  Object.assign(api, {
    setFrame: (k) => { setPlaying(false); setFrame(k); render(); return S.frame; },
    frame: () => S.frame,
    play: () => setPlaying(true),
    positions: (b) => {  // body b's vertices at the current frame, as drawn (float32), in the PLY's order
      const bd = D.bodies[b];
      return Array.from(position.array.subarray(3 * bd.start, 3 * (bd.start + bd.nv)));
    },
    visible: (b) => meshes[b].visible,
    setColorMode: (m) => { document.querySelector(`input[name=color][value=${m}]`).click(); render(); },
    camera: () => [...camera.position.toArray(), ...controls.target.toArray()],
    render, screenBox, ready: true,
  });
  requestAnimationFrame(tick);
}

main().catch((err) => {
  api.error = String(err && err.stack || err);
  $('message').textContent = 'The viewer could not start: ' + err;
  console.error(err);
});
