import { TtlCache, Clock } from "./cache";

export const systemClock: Clock = { now: () => Date.now() };

export function makeSessionStore(ttlMs: number): TtlCache<string> {
  return new TtlCache<string>(ttlMs, systemClock);
}

export function describe(store: TtlCache<string>): string {
  return `sessions=${store.size()}`;
}
