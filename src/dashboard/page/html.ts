/** The dashboard's page: its script and style are served beside it (no inline code, no CDN). */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mcp-supervisor dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="app.css">
</head>
<body>
<header>
  <h1>mcp-supervisor</h1>
  <span id="live" class="live">connecting…</span>
  <nav id="summary" aria-label="servers by state"></nav>
  <input id="filter" type="search" placeholder="filter: name, state, transport, error" aria-label="filter servers">
</header>
<main>
  <section id="list" aria-label="servers">
    <div class="row head">
      <span>server</span><span>config</span><span>state</span><span>era · transport</span><span>why</span>
      <span>next try</span><span>restarts</span><span>rtt</span><span>flight · held</span><span>pid</span>
    </div>
    <div id="viewport"><div id="spacer"></div><div id="rows"></div></div>
    <p id="count" class="muted"></p>
  </section>
  <aside id="detail" aria-label="selected server"><p class="muted">Select a server to see its machine and its timeline.</p></aside>
</main>
<section id="activity" aria-label="activity">
  <h2>Activity <small id="calls-note" class="muted"></small></h2>
  <div id="calls"></div>
</section>
<script src="app.js"></script>
</body>
</html>
`;
