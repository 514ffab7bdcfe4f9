// Preloaded with `node --import ./bench/profile-hook.ts` by bench/profile.ts: the first SIGUSR2
// starts V8's CPU profiler in this process, the second stops it and writes the profile to
// $BENCH_PROFILE, so warm-up and start-up stay out of the profile.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

const file = process.env.BENCH_PROFILE;
if (file) {
  const session = new Session();
  session.connect();
  let running = false;
  process.on('SIGUSR2', () => {
    if (!running) {
      running = true;
      void session.post('Profiler.enable')
        .then(() => session.post('Profiler.setSamplingInterval', { interval: Number(process.env.BENCH_PROFILE_INTERVAL_US ?? 250) }))
        .then(() => session.post('Profiler.start'));
      return;
    }
    void session.post('Profiler.stop').then(({ profile }) => writeFileSync(file, JSON.stringify(profile)));
  });
}
