/** The dashboard's style sheet (served as app.css). */
export const PAGE_STYLE = `
:root { --bg: #f6f7f9; --panel: #fff; --ink: #1d232b; --muted: #6b7480; --line: #e1e4e8; --lit: #2563eb;
  --ok: #15803d; --warn: #b45309; --bad: #b91c1c; --idle: #6b7280; --busy: #1d4ed8; --row: 30px;
  font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: var(--bg); }
* { box-sizing: border-box; }
body { margin: 0; height: 100vh; display: grid; grid-template-rows: auto 1fr 30vh; }
header { display: flex; align-items: center; gap: 14px; padding: 8px 14px; background: var(--panel); border-bottom: 1px solid var(--line); flex-wrap: wrap; }
h1 { font-size: 15px; margin: 0; }
h2 { font-size: 13px; margin: 0 0 6px; }
.muted { color: var(--muted); }
.live { font-size: 12px; padding: 2px 8px; border-radius: 10px; background: #e5e7eb; }
.live.on { background: #dcfce7; color: var(--ok); }
.live.off { background: #fee2e2; color: var(--bad); }
#summary { display: flex; gap: 6px; flex-wrap: wrap; flex: 1; }
#summary button { border: 1px solid var(--line); background: var(--panel); border-radius: 12px; padding: 2px 10px; cursor: pointer; font: inherit; }
#summary button.on { border-color: var(--lit); box-shadow: inset 0 0 0 1px var(--lit); }
#filter { width: 280px; padding: 4px 8px; border: 1px solid var(--line); border-radius: 6px; font: inherit; }
main { display: grid; grid-template-columns: minmax(0, 1fr) minmax(340px, 30%); min-height: 0; }
#list { display: flex; flex-direction: column; min-height: 0; background: var(--panel); border-right: 1px solid var(--line); overflow-x: auto; }
#viewport { position: relative; overflow-y: auto; flex: 1; min-height: 0; }
#rows { position: absolute; left: 0; right: 0; top: 0; }
.row { display: grid; grid-template-columns: 100px 58px minmax(120px, 1.4fr) 112px minmax(96px, 2fr) 66px 64px 46px 92px 50px;
  gap: 6px; min-width: 880px; align-items: center; height: var(--row); padding: 0 10px; border-bottom: 1px solid var(--line); white-space: nowrap; cursor: pointer; }
.row > span { overflow: hidden; text-overflow: ellipsis; }
.row.head { font-weight: 600; color: var(--muted); cursor: default; background: #fafbfc; }
.row.selected { background: #eff6ff; }
.row:not(.head):hover { background: #f3f4f6; }
#count { margin: 4px 10px; font-size: 12px; }
.state { font-weight: 600; }
.s-ready { color: var(--ok); }
.s-failed { color: var(--bad); }
.s-reconnecting, .s-expired, .s-probing, .s-authorizing { color: var(--warn); }
.s-connecting, .s-initializing, .s-reinitializing, .s-discovering { color: var(--busy); }
.s-closed, .s-closing, .s-stopped, .s-disabled { color: var(--idle); }
.sub { color: var(--muted); font-weight: 400; }
#detail { overflow-y: auto; padding: 12px 14px; min-height: 0; }
#detail h2 { font-size: 15px; display: flex; gap: 10px; align-items: baseline; }
.actions { display: flex; gap: 8px; margin: 6px 0 10px; }
.actions button { font: inherit; padding: 3px 12px; border-radius: 6px; border: 1px solid var(--line); background: var(--panel); cursor: pointer; }
.actions button:hover { border-color: var(--lit); }
dl { display: grid; grid-template-columns: 130px 1fr; gap: 2px 10px; margin: 0 0 10px; }
dt { color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; }
pre { background: #0f172a; color: #e2e8f0; padding: 8px; border-radius: 6px; max-height: 160px; overflow: auto; font-size: 12px; margin: 0 0 10px; }
.diagram { margin: 0 0 12px; overflow-x: auto; }
.diagram h3 { font-size: 12px; margin: 0 0 4px; color: var(--muted); font-weight: 600; }
.focus .now { font-size: 20px; font-weight: 700; color: #1e3a8a; margin: 0 0 6px; overflow-wrap: anywhere; }
ul.exits { list-style: none; padding: 0; margin: 0 0 6px; display: grid; gap: 3px; font-size: 14px; }
ul.exits li { display: grid; grid-template-columns: minmax(0, 1fr) auto minmax(0, 1fr); gap: 8px; align-items: baseline; }
ul.exits .event { color: var(--muted); overflow-wrap: anywhere; text-align: right; }
ul.exits .target { font-weight: 600; overflow-wrap: anywhere; }
details.whole summary { cursor: pointer; color: var(--lit); font-size: 12px; margin: 2px 0 6px; }
svg.machine { max-width: none; height: auto; font: 11px system-ui, sans-serif; }
svg.machine .state rect { fill: #fff; stroke: #9ca3af; stroke-width: 1; }
svg.machine .state.compound > rect { fill: #f9fafb; stroke-dasharray: 3 2; }
svg.machine .state text { fill: #374151; }
svg.machine .state.lit > rect { fill: #dbeafe; stroke: var(--lit); stroke-width: 2.5; stroke-dasharray: none; }
svg.machine .state.lit > text { fill: #1e3a8a; font-weight: 700; }
svg.machine .edge { fill: none; stroke: #c0c6cf; stroke-width: 1; }
svg.machine marker path { fill: #c0c6cf; }
ol.timeline { list-style: none; padding: 0; margin: 0; font-size: 12px; }
ol.timeline li { padding: 3px 0; border-bottom: 1px dashed var(--line); }
ol.timeline .err { color: var(--bad); }
#activity { background: var(--panel); border-top: 1px solid var(--line); padding: 8px 14px; overflow-y: auto; min-height: 0; }
#calls { font-size: 12px; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
.call { display: grid; grid-template-columns: 90px 140px 150px 160px 80px 60px 70px 1fr; gap: 8px; padding: 1px 0; white-space: nowrap; }
.call > span { overflow: hidden; text-overflow: ellipsis; }
.call.error .outcome { color: var(--bad); }
.call.ok .outcome { color: var(--ok); }
.call .payload { grid-column: 1 / -1; color: var(--muted); white-space: pre-wrap; }
`;
