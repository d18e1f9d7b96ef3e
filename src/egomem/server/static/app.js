// egomem inspector: plain JS over the admin REST API and the live watch socket.
"use strict";
const $ = (s) => document.querySelector(s);
let key = sessionStorage.getItem("egomem-key") || "";
let current = null;
let names = {};

async function api(path, opts = {}) {
  const r = await fetch("/api/v1" + path, {
    ...opts,
    headers: { "Authorization": "Bearer " + key, "Content-Type": "application/json", ...(opts.headers || {}) },
  });
  if (r.status === 204) return null;
  const body = await r.json();
  if (!r.ok) throw new Error(body.detail || r.statusText);
  return body;
}

function esc(s) { return String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]); }
function initials(n) { return (n || "?").split(/\s+/).map((w) => w[0]).join("").slice(0, 2).toUpperCase(); }
function when(t) { return t ? new Date(t * 1000).toLocaleString() : "—"; }

async function loadUsers() {
  const rows = await api("/users");
  names = Object.fromEntries(rows.map((r) => [r.user.id, r.user.name || "unnamed"]));
  $("#users").innerHTML = rows.map((r) => `
    <li data-id="${esc(r.user.id)}" class="${r.user.id === current ? "sel" : ""}">
      <div class="avatar ${r.user.placeholder ? "ph" : ""}" title="no face thumbnail stored">${esc(initials(r.user.name))}</div>
      <div><div class="name">${esc(r.user.name || "unnamed")}${r.user.placeholder ? " (not met)" : ""}</div>
      <div class="meta">${r.facts} facts · ${r.relations} relations · ${r.episodes} episodes</div></div>
    </li>`).join("") || '<li class="hint">nobody remembered yet</li>';
  document.querySelectorAll("#users li[data-id]").forEach((li) => li.onclick = () => show(li.dataset.id));
}

function graph(user, rels) {
  const w = 420, h = 260, cx = w / 2, cy = h / 2, r = 95;
  const others = rels.map((rel, i) => {
    const out = rel.subject_id === user.id;
    const other = out ? (rel.object_id ? names[rel.object_id] : rel.object_name) : names[rel.subject_id];
    const a = (2 * Math.PI * i) / Math.max(rels.length, 1) - Math.PI / 2;
    return { x: cx + r * Math.cos(a), y: cy + r * Math.sin(a), label: other || "?", rel: out ? rel.relation : `(their ${rel.relation})` };
  });
  return `<svg id="graph" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" role="img" aria-label="social graph">
    ${others.map((o) => `<line class="edge" x1="${cx}" y1="${cy}" x2="${o.x}" y2="${o.y}"/>
      <text x="${cx + 0.6 * (o.x - cx) + 6}" y="${cy + 0.6 * (o.y - cy)}" text-anchor="start" fill="#6b6b70">${esc(o.rel)}</text>`).join("")}
    <circle class="node center" cx="${cx}" cy="${cy}" r="22"/><text x="${cx}" y="${cy + 38}" text-anchor="middle">${esc(user.name || "unnamed")}</text>
    ${others.map((o) => `<circle class="node" cx="${o.x}" cy="${o.y}" r="16"/><text x="${o.x}" y="${o.y + 30}" text-anchor="middle">${esc(o.label)}</text>`).join("")}
  </svg>`;
}

async function show(id) {
  current = id;
  const [user, facts, rels, eps, repairs] = await Promise.all([
    api(`/users/${id}`), api(`/users/${id}/facts?history=true`), api(`/users/${id}/relations`), api(`/episodes?user_id=${id}`),
    api(`/repairs?user_id=${id}`),
  ]);
  const others = Object.entries(names).filter(([uid]) => uid !== id);
  $("#detail").innerHTML = `
    <h2>Person</h2>
    <p><b id="person-name">${esc(user.name || "unnamed")}</b> <span class="meta">first met ${when(user.created_at)}, last seen ${when(user.last_seen)}</span>
      <button id="rename">Rename</button> <button id="export">Export</button> <button id="forget-topic">Forget a topic</button> <button class="danger" id="forget">Forget this person</button></p>
    <p class="repair">${others.length ? `<select id="merge-other" aria-label="person to merge in">${others.map(([uid, n]) => `<option value="${esc(uid)}">${esc(n)} (${esc(uid)})</option>`).join("")}</select>
      <button id="merge">Merge into this person</button>` : ""}</p>
    <h2>Facts, preferences and summaries</h2>
    <table id="facts"><tr><th>kind</th><th>memory</th><th>said as</th><th>valid</th><th></th></tr>
      ${facts.map((f) => `<tr class="${f.valid_to ? "old" : ""}" data-id="${esc(f.id)}">
        <td>${esc(f.kind)}${f.sensitivity && f.sensitivity !== "none" ? ' <span class="meta">(' + esc(f.sensitivity) + ")</span>" : ""}</td><td>${esc(f.text)}</td><td class="meta">${esc(f.source_text || "")}${f.source_episode ? "<br>episode " + esc(f.source_episode) : ""}${f.identity_llr != null ? `<br>identity ${esc(f.identity_status)}, LLR ${Number(f.identity_llr).toFixed(2)}` : ""}</td>
        <td class="meta">${when(f.valid_from)}${f.valid_to ? " → " + when(f.valid_to) : ""}</td>
        <td>${f.valid_to ? "" : '<button class="fix">Correct</button> <button class="danger del">Delete</button>'}</td></tr>`).join("")}
    </table>
    <h2>Social graph</h2>${rels.length ? graph(user, rels) : '<p class="hint">no relations</p>'}
    <h2>Episodes</h2><ol class="episodes" ${eps.length ? "" : 'style="list-style:none;padding:0"'}>${eps.map((e) => `<li data-episode="${esc(e.id)}"><b>${when(e.start)}</b> ${esc(e.summary || "(no summary)")} <span class="meta">${esc(e.status)}</span>
      <button class="split" title="this episode was someone else: move it, and what was learnt from it, to another person">Not this person</button>
      <details><summary>transcript</summary><pre>${esc(e.user_transcript)}\n---\n${esc(e.assistant_transcript)}</pre></details></li>`).join("") || '<li class="hint">none</li>'}</ol>
    <h2>Repairs</h2><ul id="repairs">${repairs.map((r) => `<li data-repair="${r.id}">${esc(repairText(r))}
      ${r.undone_at ? '<span class="meta">undone</span>' : '<button class="undo">Undo</button>'}</li>`).join("") || '<li class="hint">none</li>'}</ul>`;
  $("#rename").onclick = async () => { const n = prompt("New name", user.name || ""); if (n) { await api(`/users/${id}`, { method: "PATCH", body: JSON.stringify({ name: n }) }); await refresh(); } };
  $("#export").onclick = async () => { const data = await api(`/users/${id}/export`); const a = document.createElement("a"); a.href = URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)], { type: "application/json" })); a.download = `egomem-${id}.json`; a.click(); };
  $("#forget").onclick = async () => { if (confirm(`Forget ${user.name || "this person"} completely?`)) { await api(`/users/${id}`, { method: "DELETE" }); current = null; $("#detail").innerHTML = '<p class="hint">deleted</p>'; await loadUsers(); } };
  // "Forget what I said about X": the person's facts about the topic go, with their history (docs/privacy.md).
  $("#forget-topic").onclick = async () => { const t = prompt("Forget what they said about"); if (t && t.trim()) { const r = await api(`/users/${id}/forget`, { method: "POST", body: JSON.stringify({ topic: t.trim() }) }); alert(`Forgot ${r.facts} fact(s) about ${t.trim()}`); await refresh(); } };
  const merge = $("#merge");
  if (merge) merge.onclick = async () => {
    const other = $("#merge-other").value;
    if (confirm(`Merge ${names[other]} into ${user.name || "this person"}? (Undo is under Repairs.)`)) {
      await api(`/users/${id}/merge`, { method: "POST", body: JSON.stringify({ other_id: other }) }); await refresh();
    }
  };
  document.querySelectorAll("#detail li[data-episode]").forEach((li) => {
    li.querySelector(".split").onclick = async () => {
      const n = prompt("Whose episode was it? Their name (empty: a new unnamed person)", "");
      if (n === null) return;
      const r = await api(`/users/${id}/split`, { method: "POST", body: JSON.stringify({ episodes: [li.dataset.episode], name: n.trim() || null }) });
      await loadUsers(); await show(r.other_user_id);
    };
  });
  document.querySelectorAll("#repairs li[data-repair] .undo").forEach((b) => {
    b.onclick = async () => {
      try { await api(`/repairs/${b.parentElement.dataset.repair}/undo`, { method: "POST" }); await refresh(); }
      catch (err) { alert(err.message); }
    };
  });
  document.querySelectorAll("#facts tr[data-id]").forEach((tr) => {
    const fix = tr.querySelector(".fix"), del = tr.querySelector(".del");
    if (fix) fix.onclick = async () => { const t = prompt("Corrected memory", tr.children[1].textContent); if (t) { await api(`/facts/${tr.dataset.id}`, { method: "PUT", body: JSON.stringify({ text: t }) }); await refresh(); } };
    if (del) del.onclick = async () => { await api(`/facts/${tr.dataset.id}`, { method: "DELETE" }); await refresh(); };
  });
  await loadUsers();
}

function repairText(r) {
  const moved = Object.entries(r.moved).filter(([, v]) => v).map(([k, v]) => `${v} ${k.replaceAll("_", " ")}`).join(", ") || "nothing moved";
  const who = (uid, n) => n || names[uid] || uid;
  if (r.kind === "merge") return `${when(r.at)}: merged ${who(r.other_user_id, r.other_name)} into ${who(r.user_id)} (${moved})`;
  return `${when(r.at)}: split ${r.episodes.length} episode(s) from ${who(r.user_id)} to ${who(r.other_user_id)} (${moved})`;
}

async function refresh() { await loadUsers(); if (current) await show(current); }

function watch() {
  const proto = location.protocol === "https:" ? "wss" : "ws";
  // The key goes in a first message, never in the URL (URLs end up in access logs).
  const ws = new WebSocket(`${proto}://${location.host}/api/v1/watch`);
  ws.onopen = () => ws.send(JSON.stringify({ type: "auth", key }));
  ws.onmessage = (m) => {
    const ev = JSON.parse(m.data);
    if (ev.type === "memchunk") { $(`#chunk-${ev.level}`).textContent = ev.text || "(empty)"; $("#live-status").textContent = `session active · ${ev.time}s`; }
    if (ev.type === "memory" || ev.type === "session") refresh();
  };
  ws.onclose = () => setTimeout(watch, 3000);
}

$("#login").onsubmit = async (e) => {
  e.preventDefault();
  key = $("#key").value.trim();
  sessionStorage.setItem("egomem-key", key);
  try { await loadUsers(); watch(); } catch (err) { $("#detail").innerHTML = `<p class="hint">${esc(err.message)}</p>`; }
};
if (key) { $("#key").value = key; loadUsers().then(watch).catch(() => {}); }
