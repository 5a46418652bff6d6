/** How many of a session's latest turnIds are remembered to refuse a replayed one. */
export const REMEMBERED_TURN_IDS = 1000;

/** The latest turnIds of one session, oldest forgotten first. */
export class RecentTurnIds {
  private readonly ids = new Set<string>();
  private voiceTurns = 0;

  /** The next voice turn's id, `v1`, `v2` …, skipping any a typed turn already took. */
  nextVoiceTurnId(): string {
    for (;;) {
      const id = `v${++this.voiceTurns}`;
      if (this.admit(id)) return id;
    }
  }

  /** False if the id was already seen; otherwise remembers it. */
  admit(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > REMEMBERED_TURN_IDS) this.ids.delete(this.ids.values().next().value!);
    return true;
  }
}
