// The seed's verify.ts, as a shop's backend runs it: the admission token is
// a standard HS256 JWT, verified offline with the room's secret.
import jwt from "jsonwebtoken";

export type Admission = { qnr: number; iat: number; exp: number };

// verify returns the token's claims, or throws when it is not a valid
// admission token of the room slug (send the visitor to the waiting room).
export function verify(token: string, secret: string, slug: string): Admission {
  return jwt.verify(token, secret, {
    algorithms: ["HS256"],
    issuer: "aditus-queue", // iss ist immer aditus-queue
    audience: slug, // aud ist der Queue-Slug deines Warteraums
  }) as Admission;
}
