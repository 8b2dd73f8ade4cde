// Reads {"secret", "slug", "tokens": {name: token}} on stdin and prints
// {name: qnr or null} — verify.ts's verdict on each token, for
// deploy/edge/verify_test.go.
import { readFileSync } from "node:fs";
import { verify } from "./verify.ts";

const input = JSON.parse(readFileSync(0, "utf8"));
const out: Record<string, number | null> = {};
for (const [name, token] of Object.entries(input.tokens as Record<string, string>)) {
  try {
    out[name] = verify(token, input.secret, input.slug).qnr;
  } catch {
    out[name] = null;
  }
}
console.log(JSON.stringify(out));
