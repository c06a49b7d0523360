// The sign-in lock's queue: one holder, first come first served, notices for each change, a released or ended holder
// handing on to the next in line, and what crosses continue-as-new.
import { describe, expect, it } from 'vitest';
import { LockQueue } from '../../workflows/signin-queue';

describe('the sign-in lock queue', () => {
  it('grants a free sign-in at once', () => {
    const q = new LockQueue();
    q.acquire('t1');
    expect(q.takeNotices()).toEqual([{ taskId: 't1', granted: true, holder: 't1' }]);
    expect(q.state()).toEqual({ holder: 't1', waiting: [] });
    expect(q.contended()).toBe(false);
  });

  it('queues the others in order, each told who holds it', () => {
    const q = new LockQueue();
    q.acquire('t1');
    q.takeNotices();
    q.acquire('t2');
    q.acquire('t3');
    expect(q.takeNotices()).toEqual([
      { taskId: 't2', granted: false, holder: 't1' },
      { taskId: 't3', granted: false, holder: 't1' },
    ]);
    expect(q.state()).toEqual({ holder: 't1', waiting: ['t2', 't3'] });
    expect(q.contended()).toBe(true);
  });

  it('hands on to the next in line when the holder releases, and tells the rest the new holder', () => {
    const q = new LockQueue({ holder: 't1', waiting: ['t2', 't3'] });
    q.release('t1');
    expect(q.takeNotices()).toEqual([
      { taskId: 't2', granted: true, holder: 't2' },
      { taskId: 't3', granted: false, holder: 't2' },
    ]);
    q.release('t2');
    q.release('t3');
    expect(q.idle()).toBe(true);
    expect(q.takeNotices()).toEqual([{ taskId: 't3', granted: true, holder: 't3' }]);
  });

  it('drops a waiting task that stops waiting, without changing the holder', () => {
    const q = new LockQueue({ holder: 't1', waiting: ['t2', 't3'] });
    q.release('t2');
    expect(q.state()).toEqual({ holder: 't1', waiting: ['t3'] });
    expect(q.hasNotices()).toBe(false);
  });

  it('asked twice, queues a task once and tells the holder again', () => {
    const q = new LockQueue({ holder: 't1', waiting: ['t2'] });
    q.acquire('t2');
    q.acquire('t1');
    expect(q.state()).toEqual({ holder: 't1', waiting: ['t2'] });
    expect(q.takeNotices()).toEqual([
      { taskId: 't2', granted: false, holder: 't1' },
      { taskId: 't1', granted: true, holder: 't1' },
    ]);
  });

  it('ignores a release by a task it does not know', () => {
    const q = new LockQueue({ holder: 't1', waiting: [] });
    q.release('nobody');
    expect(q.state()).toEqual({ holder: 't1', waiting: [] });
  });

  it('keeps only the last notice per task', () => {
    const q = new LockQueue({ holder: 't1', waiting: ['t2', 't3'] });
    q.release('t1'); // t2 granted, t3 told t2 holds it
    q.release('t2'); // t3 granted
    expect(q.takeNotices()).toEqual([
      { taskId: 't2', granted: true, holder: 't2' },
      { taskId: 't3', granted: true, holder: 't3' },
    ]);
  });

  it('carries its holder and line across continue-as-new', () => {
    const q = new LockQueue({ holder: 't1', waiting: ['t2'] });
    const again = new LockQueue(q.state());
    again.release('t1');
    expect(again.current).toBe('t2');
  });
});
