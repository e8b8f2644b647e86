/**
 * The runtime's mutants (docs/model-tests.md): each changes one rule of the runtime or the
 * machine, and the runtime model suite must fail at least one path with it in place. A mutant
 * is a text edit of one source file; `find` must occur exactly once (a refactor that moves the
 * code makes its check fail loudly, so the mutant is brought along instead of passing silently).
 */
export interface Mutant {
  name: string;
  /** Repository-relative path of the source file the edit applies to. */
  file: string;
  find: string;
  replace: string;
  /** Which walk must catch it: the legacy-pinned paths, or the auto-era variant. */
  suite: 'pinned' | 'auto';
}

export const MUTANTS: Mutant[] = [
  {
    name: "replay: retry 'never' replayed",
    file: 'src/runtime/recovery/replay-policy.ts',
    find: "if (retry === 'never') return false;",
    replace: "if (retry === 'never') return true;",
    suite: 'pinned',
  },
  {
    name: 'replay: any tools/call replayed',
    file: 'src/runtime/recovery/replay-policy.ts',
    find: "return method === 'tools/call' && tools?.isSafe(params?.['name']) === true;",
    replace: "return method === 'tools/call';",
    suite: 'pinned',
  },
  {
    name: 'replay: reading methods not replayed',
    file: 'src/runtime/recovery/replay-policy.ts',
    find: 'if (SAFE_METHODS.has(method)) return true;',
    replace: 'if (SAFE_METHODS.has(method)) return false;',
    suite: 'pinned',
  },
  {
    name: "replay: retry 'always' not replayed",
    file: 'src/runtime/recovery/replay-policy.ts',
    find: "if (retry === 'always') return true;",
    replace: "if (retry === 'always') return false;",
    suite: 'pinned',
  },
  {
    name: 'gate: sends while holding',
    file: 'src/runtime/requests/request-path.ts',
    find: "if (phase === 'open') this.dispatch(request, false);",
    replace: "if (phase !== 'closed') this.dispatch(request, false);",
    suite: 'pinned',
  },
  {
    name: 'probe verdict: settle doubtful requests inverted',
    file: 'src/runtime/actors/connection-actors.ts',
    find: '.settleDoubtfulRequests(lost),',
    replace: '.settleDoubtfulRequests(!lost),',
    suite: 'pinned',
  },
  {
    name: 'machine: no RECONNECT handling in probing',
    file: 'machines/connection.session.ts',
    find: "    RECONNECT: { target: 'connecting', actions: [parkDoubtfulRequests, ...reconnectActions] },\n",
    replace: '',
    suite: 'pinned',
  },
  {
    name: "discovery: a 2025-era server's 400 read as saying nothing",
    file: 'src/runtime/session/discover.ts',
    find: '(error.status === undefined || error.status >= 500)',
    replace: '(error.status === undefined || error.status >= 500 || error.status === 400)',
    suite: 'auto',
  },
  {
    name: 'era: a request refused with -32022 renumbered instead of parked',
    file: 'src/runtime/recovery/recovery.ts',
    find: "    this.waitOrFail(request);\n    this.context.tell({\n      type: 'SESSION_EXPIRED',\n      generation,\n      evidence: 'protocol version no longer supported (-32022)',\n    });",
    replace: '    this.context.pending.renumber(request);\n    this.requests.dispatch(request, false);',
    suite: 'auto',
  },
  {
    name: 'era: the client info left out of the envelope',
    file: 'src/protocol/era.ts',
    find: '      [META_CLIENT_INFO]: clientInfo,\n',
    replace: '',
    suite: 'auto',
  },
];
