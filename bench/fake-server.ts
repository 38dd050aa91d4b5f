/** The fake Messages API (default responder) in a process of its own: prints `listening <url>`. */
import { FakeAnthropic } from '../test/support/fake-anthropic/fake-anthropic.server';

void FakeAnthropic.start().then((fake) => {
  console.log(`listening ${fake.url}`);
  setInterval(() => fake.reset(), 1_000); // keeps no history
});
