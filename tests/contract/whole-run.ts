/**
 * The time limit of a contract test file's slow work, in ms: Dredd's runs, Pact's provider
 * verification and optic's diffs each happen once per file, in a `beforeAll` under this limit, and
 * the file's `it`s assert on the shared results (docs/testing.md). A limit belongs to the whole run
 * of such a tool, not to one step that waits on it, so a busy machine slows these files down
 * without failing them; the limit only stops a run that hangs.
 */
export const WHOLE_RUN_MS = 15 * 60_000;
