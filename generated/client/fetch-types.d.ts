// Written by scripts/generate.ts: the DOM lib's `BodyInit`, which the generated fetch client names,
// as Node's fetch types (@types/node) define it. This project does not compile with the DOM lib.
type BodyInit = NonNullable<RequestInit["body"]>;
