// kubectl fleet ui: the fleet as nested areas on a canvas, live from the
// server's stream. Every string from a cluster goes into the page as text
// (textContent, a canvas never runs markup), never as markup; nothing is
// put on window.
(function () {
  "use strict";

  const colours = { good: "#2e9d57", warn: "#d99a1c", bad: "#c8372d", down: "#8b8f96", unread: "#8b8f96", none: "#cfd5dd" };
  const healthWords = { good: "ready", warn: "progressing", bad: "failing", down: "unreachable", unread: "unread", none: "nothing reported" };
  const headerHeight = 18;
  const flashMillis = 4000;
  const maxLabels = 600;
  const maxFeed = 200;

  const tiles = new Map(); // path → tile, in the server's order
  const flashed = new Map(); // path → when a batch last changed it here
  let feed = [];
  let stats = {};
  let layout = null; // d3 hierarchy, laid out in map units
  let nodes = []; // layout's nodes, parents before children
  let selected = null;
  let view = { k: 1, x: 0, y: 0 };
  let query = parseQuery("");
  let drawPending = false;
  // What the page says of itself on the canvas's data attributes, for
  // the tests and the benchmark: when the snapshot came (to time its
  // first drawing) and the id of the last change drawn.
  let snapshotAt = null;
  let lastID = "";
  // The labels are elements, rebuilt only when what they show changed or
  // the zoom did: while the map pans they move with it, as one.
  let labelsDirty = true;
  let countsPending = true;
  let labelsView = { k: 1, x: 0, y: 0 };
  const envNamed = new Map(); // env → whether a master has that name; cleared on every change
  let layoutPending = true;

  const $ = (id) => document.getElementById(id);
  const canvas = $("map");
  const stage = $("stage");
  const labels = $("labels");
  const ctx = canvas.getContext("2d");

  // ---- the stream --------------------------------------------------------

  function connect() {
    const source = new EventSource("/api/events");
    source.addEventListener("open", () => status("live", "live"));
    source.addEventListener("snapshot", (e) => {
      snapshotAt = performance.now();
      lastID = e.lastEventId;
      const doc = JSON.parse(e.data);
      tiles.clear();
      for (const t of doc.tiles || []) tiles.set(t.path, t);
      feed = (doc.events || []).slice().reverse();
      stats = doc.stats || {};
      changed(true);
    });
    source.addEventListener("batch", (e) => {
      lastID = e.lastEventId;
      const b = JSON.parse(e.data);
      const now = Date.now();
      let structure = false;
      for (const t of b.tiles || []) {
        const old = tiles.get(t.path);
        if (!old || old.parent !== t.parent) structure = true;
        if (old) flashed.set(t.path, now);
        tiles.set(t.path, t);
      }
      for (const p of b.removed || []) {
        tiles.delete(p);
        structure = true;
      }
      for (const ev of b.events || []) feed.unshift(ev);
      feed.length = Math.min(feed.length, maxFeed);
      stats = b.stats || stats;
      changed(structure);
    });
    source.addEventListener("error", () => {
      if (source.readyState === EventSource.CLOSED) {
        status("lost", "the server refused the stream: run kubectl fleet ui again and open the address it prints");
      } else {
        status("lost", "reconnecting…");
      }
    });
  }

  function status(cls, text) {
    const s = $("status");
    s.className = cls;
    s.textContent = text;
  }

  function changed(structure) {
    envNamed.clear();
    labelsDirty = true;
    countsPending = true;
    if (structure) layoutPending = true;
    renderSummary();
    renderFeed();
    if (selected !== null && tiles.has(selected)) renderPanel(false);
    schedule();
  }

  // ---- the layout --------------------------------------------------------

  function buildLayout() {
    const rect = stage.getBoundingClientRect();
    let root = null;
    const byPath = new Map();
    for (const t of tiles.values()) byPath.set(t.path, { path: t.path, children: [] });
    for (const t of tiles.values()) {
      if (t.root) root = byPath.get(t.path);
      else if (byPath.has(t.parent)) byPath.get(t.parent).children.push(byPath.get(t.path));
    }
    if (!root) {
      layout = null;
      nodes = [];
      return;
    }
    const h = d3.hierarchy(root, (d) => d.children).sum((d) => (d.children.length ? 0 : 1));
    d3.treemap()
      .tile(d3.treemapSquarify)
      .size([Math.max(rect.width, 1), Math.max(rect.height, 1)])
      .paddingOuter(3)
      .paddingTop((d) => (d.children ? headerHeight : 0))
      .paddingInner(2)(h);
    layout = h;
    nodes = h.descendants();
    canvas.dataset.tiles = String(nodes.length);
    layoutPending = false;
    countsPending = true;
  }

  // tileOf is the node's tile as the stream last sent it: the layout
  // keeps paths, the tiles change under it.
  function tileOf(n) {
    return tiles.get(n.data.path);
  }

  // count gives each frame its header's counts, in one pass from the
  // leaves up (nodes are parents before children).
  function count() {
    for (const n of nodes) n.counts = { ready: 0, total: 0, drift: 0, frozen: 0 };
    for (let i = nodes.length - 1; i > 0; i--) {
      const n = nodes[i], p = n.parent.counts, c = n.counts, t = tileOf(n);
      p.total += 1 + c.total;
      p.ready += c.ready + (t.health === "good" || t.health === "none" ? 1 : 0);
      p.drift += c.drift + (t.drift && t.drift.length ? 1 : 0);
      p.frozen += c.frozen + (t.frozen && t.frozen.length ? 1 : 0);
    }
    countsPending = false;
  }

  // ---- drawing -----------------------------------------------------------

  const patterns = {};
  function pattern(kind) {
    if (patterns[kind]) return patterns[kind];
    const c = document.createElement("canvas");
    c.width = c.height = 8;
    const g = c.getContext("2d");
    g.strokeStyle = "rgba(255,255,255,0.55)";
    g.fillStyle = "rgba(255,255,255,0.55)";
    g.lineWidth = 1.5;
    if (kind === "bad") {
      g.beginPath();
      g.moveTo(0, 8); g.lineTo(8, 0);
      g.moveTo(-2, 2); g.lineTo(2, -2);
      g.moveTo(6, 10); g.lineTo(10, 6);
      g.stroke();
    } else if (kind === "warn") {
      g.beginPath();
      g.arc(4, 4, 1.3, 0, 2 * Math.PI);
      g.fill();
    } else if (kind === "down" || kind === "unread") {
      g.beginPath();
      g.moveTo(0, 0); g.lineTo(8, 8);
      g.moveTo(8, 0); g.lineTo(0, 8);
      g.stroke();
    } else {
      return null;
    }
    patterns[kind] = ctx.createPattern(c, "repeat");
    return patterns[kind];
  }

  function schedule() {
    if (drawPending) return;
    drawPending = true;
    requestAnimationFrame(draw);
  }

  function draw() {
    const started = performance.now();
    drawPending = false;
    const rect = stage.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(rect.width * dpr) || canvas.height !== Math.round(rect.height * dpr)) {
      canvas.width = Math.round(rect.width * dpr);
      canvas.height = Math.round(rect.height * dpr);
      layoutPending = true;
    }
    if (layoutPending) {
      buildLayout();
      labelsDirty = true;
    }
    if (countsPending) count();
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, rect.width, rect.height);
    const now = Date.now();
    let flashing = false;
    const shown = [];
    // Rectangles are gathered by how they are filled and drawn a path at
    // a time: a fill or a stroke per tile is what made a pan slow.
    const groups = new Map(); // "health|dim" → [x, y, w, h, …]
    const add = (key, x, y, w, h) => {
      let g = groups.get(key);
      if (!g) groups.set(key, (g = []));
      g.push(x, y, w, h);
    };
    const frames = [], leaves = [], marked = [];
    for (const n of nodes) {
      const t = tileOf(n);
      const x = n.x0 * view.k + view.x, y = n.y0 * view.k + view.y;
      const w = (n.x1 - n.x0) * view.k, h = (n.y1 - n.y0) * view.k;
      if (x > rect.width || y > rect.height || x + w < 0 || y + h < 0 || w < 0.5 || h < 0.5) continue;
      const dim = matches(t) ? "" : "dim";
      if (n.children) {
        add("frame|" + dim, x, y, w, h);
        add(t.health + "|" + dim, x, y, w, Math.min(headerHeight * view.k, h));
        frames.push(x + 0.5, y + 0.5, Math.max(w - 1, 0), Math.max(h - 1, 0));
      } else {
        add(t.health + "|" + dim, x, y, w, h);
        if (w > 3 && h > 3) leaves.push(x + 0.5, y + 0.5, w - 1, h - 1);
      }
      const since = flashed.get(t.path);
      const flash = since && now - since < flashMillis;
      if (flash) flashing = true;
      if (flash || t.path === selected || (w >= 14 && h >= 10 && ((t.drift && t.drift.length) || (t.frozen && t.frozen.length) || t.cycleOf != null))) {
        marked.push({ t, x, y, w, h, flash, dim });
      }
      if (w > 36 && h > 14) shown.push({ n, x, y, w, h });
    }
    // Frames first (their background), then every health, each with its
    // pattern; the dimmed at a lower alpha.
    for (const health of ["frame", "none", "good", "warn", "bad", "unread", "down"]) {
      for (const dim of ["", "dim"]) {
        ctx.globalAlpha = dim ? 0.22 : 1;
        const g = groups.get(health + "|" + dim);
        if (!g) continue;
        ctx.beginPath();
        for (let i = 0; i < g.length; i += 4) ctx.rect(g[i], g[i + 1], g[i + 2], g[i + 3]);
        ctx.fillStyle = health === "frame" ? "#f3f5f8" : colours[health] || colours.none;
        ctx.fill();
        const p = health === "frame" ? null : pattern(health);
        if (p) {
          ctx.fillStyle = p;
          ctx.fill();
        }
      }
    }
    ctx.globalAlpha = 1;
    ctx.lineWidth = 1;
    strokeAll(leaves, "rgba(0,0,0,0.15)");
    strokeAll(frames, "#b9c1cc");
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "top";
    for (const m of marked) {
      ctx.globalAlpha = m.dim ? 0.22 : 1;
      marks(m.t, m.x, m.y, m.w, m.h);
      if (m.flash) {
        ctx.strokeStyle = "#2457c5";
        ctx.lineWidth = 3;
        ctx.strokeRect(m.x + 1.5, m.y + 1.5, Math.max(m.w - 3, 0), Math.max(m.h - 3, 0));
      }
      if (m.t.path === selected) {
        ctx.strokeStyle = "#1d2430";
        ctx.lineWidth = 2;
        ctx.strokeRect(m.x + 1, m.y + 1, Math.max(m.w - 2, 0), Math.max(m.h - 2, 0));
      }
    }
    ctx.globalAlpha = 1;
    if (labelsDirty || view.k !== labelsView.k) {
      drawLabels(shown);
      labelsView = { k: view.k, x: view.x, y: view.y };
      labelsDirty = false;
      labels.style.transform = "";
    } else {
      labels.style.transform = "translate(" + (view.x - labelsView.x) + "px, " + (view.y - labelsView.y) + "px)";
    }
    canvas.dataset.drawn = String(Number(canvas.dataset.drawn) + 1);
    canvas.dataset.id = lastID;
    if (snapshotAt !== null) {
      canvas.dataset.firstDrawMillis = (performance.now() - snapshotAt).toFixed(1);
      snapshotAt = null;
    }
    canvas.dataset.drawMillis = (performance.now() - started).toFixed(2);
    if (flashing) schedule();
  }

  // strokeAll strokes the rectangles of rects ([x, y, w, h, …]) as one
  // path.
  function strokeAll(rects, style) {
    if (!rects.length) return;
    ctx.beginPath();
    for (let i = 0; i < rects.length; i += 4) ctx.rect(rects[i], rects[i + 1], rects[i + 2], rects[i + 3]);
    ctx.strokeStyle = style;
    ctx.stroke();
  }

  // marks draws a tile's marks in its top-right corner: drift a triangle,
  // frozen a snowflake, a cycle an arrow.
  function marks(t, x, y, w, h) {
    if (w < 14 || h < 10) return;
    let right = x + w - 3;
    ctx.textAlign = "right";
    const put = (glyph, colour) => {
      ctx.fillStyle = colour;
      ctx.fillText(glyph, right, y + 3);
      right -= 13;
    };
    if (t.drift && t.drift.length) put("▲", "#1d2430");
    if (t.frozen && t.frozen.length) put("❄", "#1b4fa0");
    if (t.cycleOf !== undefined && t.cycleOf !== null) put("↻", "#1d2430");
    ctx.textAlign = "left";
  }

  // drawLabels puts the names where there is room, as text in elements
  // over the canvas: a click on one selects its cluster.
  function drawLabels(shown) {
    shown.sort((a, b) => b.w * b.h - a.w * a.h);
    shown.length = Math.min(shown.length, maxLabels);
    const frag = document.createDocumentFragment();
    for (const s of shown) {
      const t = tileOf(s.n);
      const el = document.createElement("div");
      el.className = "label" + (s.n.children ? " frame" : "") + (matches(t) ? "" : " dim");
      el.dataset.path = t.path;
      el.dataset.health = t.health;
      el.style.left = s.x + "px";
      el.style.top = s.y + "px";
      el.style.width = Math.max(s.w - 30, 10) + "px";
      el.style.height = (s.n.children ? Math.min(headerHeight * view.k, s.h) : Math.min(s.h, 18)) + "px";
      el.textContent = s.n.children ? frameTitle(s.n) : tileName(t);
      el.title = (t.path || t.name) + " · " + (healthWords[t.health] || t.health);
      frag.appendChild(el);
    }
    labels.replaceChildren(frag);
  }

  function tileName(t) {
    return t.root ? t.name : t.path.slice(t.path.lastIndexOf("/") + 1);
  }

  function frameTitle(n) {
    const c = n.counts;
    let s = tileName(tileOf(n)) + "  " + c.ready + "/" + c.total + " ready";
    if (c.drift) s += " · " + c.drift + " drift";
    if (c.frozen) s += " · " + c.frozen + " frozen";
    return s;
  }

  // ---- pan and zoom ------------------------------------------------------

  let drag = null;
  stage.addEventListener("pointerdown", (e) => {
    drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y, moved: false };
    stage.setPointerCapture(e.pointerId);
  });
  stage.addEventListener("pointermove", (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) {
      drag.moved = true;
      stage.classList.add("panning");
    }
    view.x = drag.vx + dx;
    view.y = drag.vy + dy;
    schedule();
  });
  stage.addEventListener("pointerup", (e) => {
    const d = drag;
    drag = null;
    stage.classList.remove("panning");
    if (d && d.moved) {
      labelsDirty = true;
      schedule();
    }
    if (d && !d.moved) select(hit(e));
  });
  stage.addEventListener("wheel", (e) => {
    e.preventDefault();
    const r = stage.getBoundingClientRect();
    const px = e.clientX - r.left, py = e.clientY - r.top;
    const k = Math.min(Math.max(view.k * Math.pow(2, -e.deltaY / 400), 0.5), 64);
    view.x = px - ((px - view.x) * k) / view.k;
    view.y = py - ((py - view.y) * k) / view.k;
    view.k = k;
    schedule();
  }, { passive: false });
  document.addEventListener("keydown", (e) => {
    if (e.target === $("search")) return;
    if (e.key === "0") {
      view = { k: 1, x: 0, y: 0 };
      labelsDirty = true;
    }
    else if (e.key === "Escape") select(null);
    else return;
    schedule();
  });
  window.addEventListener("resize", () => {
    layoutPending = true;
    labelsDirty = true;
    schedule();
  });

  // hit is the path of the deepest tile under the pointer, or null.
  function hit(e) {
    const label = e.target.closest && e.target.closest(".label");
    if (label) return label.dataset.path;
    const r = stage.getBoundingClientRect();
    const mx = (e.clientX - r.left - view.x) / view.k, my = (e.clientY - r.top - view.y) / view.k;
    let found = null;
    let n = layout;
    while (n) {
      if (mx < n.x0 || mx > n.x1 || my < n.y0 || my > n.y1) break;
      found = n;
      n = (n.children || []).find((c) => mx >= c.x0 && mx <= c.x1 && my >= c.y0 && my <= c.y1) || null;
    }
    return found ? found.data.path : null;
  }

  // ---- selection and the side panel --------------------------------------

  let describing = 0;
  function select(path) {
    selected = path;
    labelsDirty = true;
    renderPanel(true);
    schedule();
  }

  $("close").addEventListener("click", () => select(null));

  function renderPanel(fetchDescribe) {
    const panel = $("panel");
    const t = selected === null ? null : tiles.get(selected);
    if (!t) {
      panel.hidden = true;
      return;
    }
    panel.hidden = false;
    panel.dataset.path = t.path;
    $("panel-path").textContent = t.root ? t.name + " (root)" : t.path;
    const facts = [];
    facts.push(["health", healthWords[t.health] || t.health, "health-" + t.health]);
    if (t.env) facts.push(["env", t.env]);
    if (t.namespace) facts.push(["namespace", t.namespace]);
    if (t.version || t.liveVersion) facts.push(["version", [t.version, t.liveVersion].filter(Boolean).join(" → live ")]);
    for (const c of t.cells || []) facts.push([c.column.toLowerCase(), c.text, "health-" + c.health]);
    if (t.drift && t.drift.length) facts.push(["drift", t.drift.join(", ")]);
    if (t.frozen && t.frozen.length) facts.push(["frozen", t.frozen.join(", ")]);
    if (t.error) facts.push(["error", t.error, "health-bad"]);
    if (t.down) facts.push(["unreachable", "since " + t.down.since + ": " + t.down.error, "health-down"]);
    if (t.cycleOf !== undefined && t.cycleOf !== null) facts.push(["cycle of", t.cycleOf || "the root"]);
    for (const [k, v] of Object.entries(t.labels || {})) facts.push(["label", k + "=" + v]);
    const dl = $("panel-facts");
    dl.replaceChildren();
    for (const [k, v, cls] of facts) {
      const dt = document.createElement("dt");
      dt.textContent = k;
      const dd = document.createElement("dd");
      dd.textContent = v;
      if (cls) dd.className = cls;
      dl.append(dt, dd);
    }
    const ul = $("panel-commands");
    ul.replaceChildren();
    if (!t.root) {
      for (const cmd of ["describe", "get-kubeconfig", "drift"]) {
        const li = document.createElement("li");
        const code = document.createElement("code");
        code.textContent = "kubectl fleet " + cmd + " " + shellQuote(t.path);
        const copy = document.createElement("button");
        copy.type = "button";
        copy.textContent = "copy";
        copy.addEventListener("click", () => navigator.clipboard && navigator.clipboard.writeText(code.textContent));
        li.append(code, copy);
        ul.append(li);
      }
    }
    if (fetchDescribe) describe(t.path);
  }

  function describe(path) {
    const id = ++describing;
    $("panel-describe-status").textContent = "reading…";
    $("panel-describe").textContent = "";
    fetch("/api/describe?path=" + encodeURIComponent(path), { credentials: "same-origin" })
      .then((r) => r.json().then((body) => ({ ok: r.ok, body })))
      .then(({ ok, body }) => {
        if (id !== describing) return;
        $("panel-describe-status").textContent = ok ? "" : "describe failed: " + (body && body.error);
        if (ok) $("panel-describe").textContent = JSON.stringify(body, null, 2);
      })
      .catch((err) => {
        if (id === describing) $("panel-describe-status").textContent = "describe failed: " + err;
      });
  }

  function shellQuote(s) {
    return /^[A-Za-z0-9_./:-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'";
  }

  // ---- the summary strip and the search ----------------------------------

  function renderSummary() {
    const counts = { good: 0, warn: 0, bad: 0, down: 0, unread: 0, none: 0 };
    let drift = 0, frozen = 0, cycles = 0;
    const kinds = new Map();
    for (const t of tiles.values()) {
      counts[t.health] = (counts[t.health] || 0) + 1;
      if (t.drift && t.drift.length) drift++;
      for (const k of t.drift || []) kinds.set(k, (kinds.get(k) || 0) + 1);
      if (t.frozen && t.frozen.length) frozen++;
      if (t.cycleOf !== undefined && t.cycleOf !== null) cycles++;
    }
    const items = [["clusters", tiles.size, ""]];
    for (const h of ["good", "warn", "bad", "down", "unread", "none"]) {
      if (counts[h]) items.push([healthWords[h], counts[h], "health:" + h]);
    }
    if (drift) items.push(["drift", drift, "drift"]);
    for (const k of [...kinds.keys()].sort()) items.push(["drift: " + k, kinds.get(k), "drift:" + k]);
    if (frozen) items.push(["frozen", frozen, "frozen"]);
    if (cycles) items.push(["cycle", cycles, "cycle"]);
    const nav = $("summary");
    nav.replaceChildren();
    for (const [word, n, q] of items) {
      const b = document.createElement("button");
      b.type = "button";
      b.dataset.query = q;
      if (q && $("search").value.trim() === q) b.classList.add("on");
      const num = document.createElement("span");
      num.className = "n";
      num.textContent = String(n);
      b.append(num, document.createTextNode(word));
      b.addEventListener("click", () => setQuery($("search").value.trim() === q ? "" : q));
      nav.append(b);
    }
  }

  // parseQuery turns the search box into tests every term of which a
  // cluster must pass: path globs (* within a segment, ** across), env:,
  // label:KEY=VALUE (or KEY=VALUE), health:, drift[:KIND], frozen, down,
  // cycle; --env NAME as the CLI writes it.
  function parseQuery(text) {
    const words = text.trim().split(/\s+/).filter(Boolean);
    const tests = [];
    for (let i = 0; i < words.length; i++) {
      let w = words[i];
      if ((w === "--env" || w === "-e") && i + 1 < words.length) w = "env:" + words[++i];
      else if (w.startsWith("--env=")) w = "env:" + w.slice(6);
      else if ((w === "-l" || w === "--selector") && i + 1 < words.length) w = "labels:" + words[++i];
      else if (w.startsWith("--selector=") || w.startsWith("-l=")) w = "labels:" + w.slice(w.indexOf("=") + 1);
      const [key, ...rest] = w.split(":");
      const value = rest.join(":");
      if (key === "env" && value) tests.push((t) => inEnv(t, value));
      else if (key === "label" && value) tests.push(labelTest(value));
      else if (key === "labels" && value) for (const kv of value.split(",")) tests.push(labelTest(kv));
      else if (key === "health" && value) tests.push((t) => t.health === value);
      else if (key === "drift") tests.push((t) => t.drift && t.drift.length > 0 && (!value || t.drift.includes(value)));
      else if (w === "frozen") tests.push((t) => t.frozen && t.frozen.length > 0);
      else if (w === "down") tests.push((t) => t.health === "down" || t.health === "unread");
      else if (w === "cycle") tests.push((t) => t.cycleOf !== undefined && t.cycleOf !== null);
      else if (!w.includes("/") && w.includes("=")) tests.push(labelTest(w));
      else tests.push(pathTest(w));
    }
    return tests;
  }

  // inEnv: --env's rule: the master of that name, or where no master
  // has it, the masters of that infrastructure provider; and what they
  // hold.
  function inEnv(t, env) {
    const master = t.env ? tiles.get(t.env) : null;
    if (!master) return false;
    if (!envNamed.has(env)) {
      let named = false;
      for (const m of tiles.values()) if (m.parent === "" && !m.root && m.name === env) named = true;
      envNamed.set(env, named);
    }
    if (envNamed.get(env)) return master.name === env;
    return (master.cells || []).some((c) => c.column === "PROVIDER" && c.text === env);
  }

  function labelTest(kv) {
    const [k, v] = kv.split("=");
    return (t) => t.labels && Object.prototype.hasOwnProperty.call(t.labels, k) && (v === undefined || t.labels[k] === v);
  }

  function pathTest(glob) {
    const re = new RegExp("^" + glob.split("**").map((part) =>
      part.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join("[^/]*")).join(".*") + "(/.*)?$");
    return (t) => re.test(t.path) || (!glob.includes("/") && t.name === glob);
  }

  function matches(t) {
    return query.every((test) => test(t));
  }

  function setQuery(text) {
    $("search").value = text;
    applyQuery();
  }

  function applyQuery() {
    const text = $("search").value;
    query = parseQuery(text);
    const url = new URL(window.location.href);
    if (text.trim()) url.searchParams.set("q", text.trim());
    else url.searchParams.delete("q");
    history.replaceState(null, "", url.pathname + url.search);
    labelsDirty = true;
    renderSummary();
    schedule();
  }

  $("search").addEventListener("input", applyQuery);

  // ---- the change feed ---------------------------------------------------

  function renderFeed() {
    const ol = $("feed-list");
    ol.replaceChildren();
    for (const ev of feed) {
      const li = document.createElement("li");
      const time = document.createElement("time");
      time.dateTime = ev.time;
      time.textContent = new Date(ev.time).toLocaleTimeString();
      const what = [ev.path || "(root)", ev.kind, (ev.namespace ? ev.namespace + "/" : "") + ev.name, ev.change].join("  ");
      li.append(time, document.createTextNode(what + (ev.error ? ": " + ev.error : "")));
      li.dataset.path = ev.path;
      li.addEventListener("click", () => select(ev.path));
      ol.append(li);
    }
  }

  // ---- start -------------------------------------------------------------

  const q = new URL(window.location.href).searchParams.get("q");
  if (q) {
    $("search").value = q;
    query = parseQuery(q);
  }
  connect();
})();
