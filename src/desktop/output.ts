// Collects a command's output in bounded memory: the first `head` and the last `tail` characters, and a count of
// what lies between, rendered as "[… N characters omitted …]".

export class HeadTailBuffer {
  private head = '';
  private tail = '';
  private total = 0;

  constructor(
    private readonly headChars: number,
    private readonly tailChars: number,
  ) {}

  append(text: string): void {
    this.total += text.length;
    let rest = text;
    if (this.head.length < this.headChars) {
      const room = this.headChars - this.head.length;
      this.head += rest.slice(0, room);
      rest = rest.slice(room);
    }
    if (rest.length === 0) return;
    this.tail += rest;
    // Trim lazily so appending many small chunks stays linear.
    if (this.tail.length > 2 * this.tailChars + 4096) this.tail = this.tail.slice(-this.tailChars);
  }

  get truncated(): boolean {
    return this.total > this.headChars + this.tailChars;
  }

  toString(): string {
    const tail = this.tailChars > 0 ? this.tail.slice(-this.tailChars) : '';
    if (!this.truncated) return this.head + this.tail;
    const omitted = this.total - this.head.length - tail.length;
    return `${this.head}\n[… ${omitted} characters omitted …]\n${tail}`;
  }
}
