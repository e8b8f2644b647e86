/**
 * `prepare` builds dist/ when npm installs the package from git; the packed manifest goes without
 * it (npm 11 warns about an install script on every install of the tarball). `drop` (prepack)
 * takes it out, `restore` (postpack, postpublish) puts it back — after the publish read the
 * manifest, not before (npm publish runs postpack first). With npm's own `npm pkg`.
 */
import { execFileSync } from 'node:child_process';

const PREPARE = 'npm run -s build';
const npm = (...args) => execFileSync(process.execPath, [process.env.npm_execpath, ...args], { stdio: 'inherit' });
const publishing = process.env.npm_command === 'publish' && process.env.npm_lifecycle_event === 'postpack';

// `--json=false`: `npm pack --json` hands its flag down (`npm pkg set` would read the value as JSON).
if (process.argv[2] === 'drop') npm('pkg', 'delete', 'scripts.prepare', '--json=false');
else if (process.argv[2] === 'restore' && !publishing) npm('pkg', 'set', `scripts.prepare=${PREPARE}`, '--json=false');
