import { Registry } from 'prom-client';
import { ToolRegistry } from '@parley/agent';
import { MeteredToolRegistry } from './metered-tool-registry';
import { WorkerMetrics } from './worker-metrics';

/** A clock that moves 250 ms between reads. */
const ticking = () => {
  let t = 0;
  return () => (t += 250);
};

async function lines(registry: Registry, prefix: string): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((l) => l.startsWith(prefix));
}

describe(MeteredToolRegistry.name, () => {
  it('times each call by server, tool and outcome; an unknown tool under one label', async () => {
    const metrics = new WorkerMetrics(new Registry());
    const tool = {
      name: 'search_book',
      description: '',
      inputSchema: { type: 'object' as const, properties: {} },
      availableFor: () => true,
      run: async (input: unknown) => ({ content: 'found', isError: (input as { bad?: boolean }).bad }),
    };
    const remote = { ...tool, name: 'weather__forecast', origin: { server: 'weather', tool: 'forecast' } };
    const sut = new MeteredToolRegistry([tool, remote], metrics, ticking());
    const ctx = { conversationId: 'c', bookId: 'b', readingPosition: null } as never;
    await sut.run('search_book', {}, ctx);
    await sut.run('search_book', { bad: true }, ctx);
    await sut.run('weather__forecast', {}, ctx);
    await sut.run('made_up_by_the_model', {}, ctx);
    expect(await lines(metrics.registry, 'parley_tool_call_duration_seconds_count')).toEqual([
      'parley_tool_call_duration_seconds_count{server="parley",tool="search_book",outcome="ok"} 1',
      'parley_tool_call_duration_seconds_count{server="parley",tool="search_book",outcome="error"} 1',
      'parley_tool_call_duration_seconds_count{server="weather",tool="forecast",outcome="ok"} 1',
      'parley_tool_call_duration_seconds_count{server="unknown",tool="unknown",outcome="error"} 1',
    ]);
  });

  it("hands the model's call id on to the registry, which names the call's span by it", async () => {
    const metrics = new WorkerMetrics(new Registry());
    const sut = new MeteredToolRegistry([], metrics, ticking());
    // the registry's runFound makes the span; the metered run hands it the tool it looked up (none here)
    const run = jest.spyOn(ToolRegistry.prototype as unknown as { runFound: () => unknown }, 'runFound');
    await sut.run('search_book', {}, {} as never, 'toolu_1');
    expect(run).toHaveBeenCalledWith(undefined, 'search_book', {}, {}, 'toolu_1');
    run.mockRestore();
  });
});
