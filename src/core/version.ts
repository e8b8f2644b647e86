/** Sent as clientInfo.version unless the caller names its own client. Kept in step with package.json by a test. */
export const VERSION = '0.1.0';
