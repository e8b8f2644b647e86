/**
 * The environment a stdio server starts with: a small safe set inherited from this process
 * (enough for `npx`, `uvx` and shells to work), never its secrets, plus the configured `env`.
 */

const POSIX_KEYS = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'LANG', 'LC_ALL', 'TMPDIR'];

const WINDOWS_KEYS = [
  'APPDATA',
  'HOMEDRIVE',
  'HOMEPATH',
  'LOCALAPPDATA',
  'PATH',
  'PROCESSOR_ARCHITECTURE',
  'SYSTEMDRIVE',
  'SYSTEMROOT',
  'TEMP',
  'USERNAME',
  'USERPROFILE',
  'PROGRAMFILES',
];

function inheritedEnvironmentKeys(platform: NodeJS.Platform = process.platform): readonly string[] {
  return platform === 'win32' ? WINDOWS_KEYS : POSIX_KEYS;
}

/** The safe inherited set with `configured` on top (configured values win). */
export function stdioEnvironment(
  configured: Record<string, string>,
  source: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of inheritedEnvironmentKeys(platform)) {
    const value = source[key];
    // Values starting with `()` are exported shell functions, not settings.
    if (value === undefined || value.startsWith('()')) continue;
    env[key] = value;
  }
  return { ...env, ...configured };
}
