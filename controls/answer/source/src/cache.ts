// A small time-bounded cache used by the synthetic controls.
export interface Clock {
  now(): number;
}

export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(private readonly ttlMs: number, private readonly clock: Clock) {
    if (ttlMs <= 0) {
      throw new RangeError("ttlMs must be positive");
    }
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) {
      return undefined;
    }
    if (entry.expiresAt <= this.clock.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V): void {
    this.entries.set(key, { value, expiresAt: this.clock.now() + this.ttlMs });
  }

  size(): number {
    return this.entries.size;
  }
}
