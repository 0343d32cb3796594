// Moved to lib/harness/ (shared with the tools); the test kit re-exports it.
export * from '../harness/events.ts';
