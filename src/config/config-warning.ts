/** A config warning: what it says, where it points, and the last place it can go. */

/** A likely mistake that does not stop the server: an unknown field, a `${…}` left unexpanded. */
export interface ConfigWarning {
  /** `servers.<name>.<field>`, or a top-level key of a file */
  path: string;
  message: string;
  /** The file the warning is about (loadConfig's warnings). */
  file?: string | undefined;
}

export interface ParseOptions {
  /** Warnings become a ConfigError (default false). */
  strict?: boolean | undefined;
  /** Where warnings go (default: `process.emitWarning`). */
  onWarning?: ((warning: ConfigWarning) => void) | undefined;
}

/** `file: path: message`, one line. */
export function formatConfigWarning(warning: ConfigWarning): string {
  return `${warning.file ? `${warning.file}: ` : ''}${warning.path}: ${warning.message}`;
}

/** The last resort for a config warning: `process.emitWarning`. */
export function emitConfigWarning(warning: ConfigWarning): void {
  process.emitWarning(formatConfigWarning(warning), 'McpSupervisorConfigWarning');
}
