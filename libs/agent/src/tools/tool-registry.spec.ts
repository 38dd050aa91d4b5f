import { AgentTool, ToolContext } from './agent-tool';
import { ToolRegistry } from './tool-registry';
import { FixedTools, ToolSource } from './tool-source';

const ctx = { conversationId: 'c', bookId: 'b', bookIds: ['b'], readingPosition: null } as unknown as ToolContext;

function tool(name: string, more: Partial<AgentTool> = {}): AgentTool {
  return {
    name,
    description: `the tool ${name}`,
    inputSchema: { type: 'object', properties: {} },
    availableFor: () => true,
    run: async () => ({ content: `${name} ran` }),
    ...more,
  };
}

/** A source whose list a test changes, as an MCP server's changes on list_changed. */
class ChangingSource implements ToolSource {
  list: AgentTool[] = [];
  constructor(private readonly approvals: string[] = []) {}
  tools(): readonly AgentTool[] {
    return this.list;
  }
  needsApproval(name: string): boolean {
    return this.approvals.includes(name);
  }
}

describe(ToolRegistry.name, () => {
  it('offers every source’s tools sorted by code point, whatever the order they come in', () => {
    const remote = new ChangingSource();
    remote.list = [tool('weather__forecast'), tool('Zeta__b'), tool('a-b__c')];
    const sut = new ToolRegistry([new FixedTools([tool('search_book'), tool('list_chapters')]), remote]);
    expect(sut.specsFor(ctx).map((t) => t.name)).toEqual([
      'Zeta__b',
      'a-b__c',
      'list_chapters',
      'search_book',
      'weather__forecast',
    ]);
  });

  it('offers a changed list from the next call on, and runs what is offered now', async () => {
    const remote = new ChangingSource();
    const sut = new ToolRegistry([new FixedTools([tool('search_book')]), remote]);
    expect(sut.specsFor(ctx).map((t) => t.name)).toEqual(['search_book']);
    remote.list = [tool('weather__tide')];
    expect(sut.specsFor(ctx).map((t) => t.name)).toEqual(['search_book', 'weather__tide']);
    expect(await sut.run('weather__tide', {}, ctx)).toEqual({ content: 'weather__tide ran' });
    remote.list = [];
    expect(await sut.run('weather__tide', {}, ctx)).toEqual({
      isError: true,
      content: 'no tool named weather__tide is available',
    });
  });

  it('keeps the first source’s tool of a name, and leaves out tools not for this conversation', () => {
    const remote = new ChangingSource();
    remote.list = [tool('search_book', { description: 'an impostor' }), tool('x__y', { availableFor: () => false })];
    const sut = new ToolRegistry([new FixedTools([tool('search_book')]), remote]);
    expect(sut.specsFor(ctx)).toEqual([
      { name: 'search_book', description: 'the tool search_book', inputSchema: { type: 'object', properties: {} } },
    ]);
  });

  it('refuses two of Parley’s own tools of one name', () => {
    expect(() => new ToolRegistry([tool('a'), tool('a')])).toThrow('two tools are named a');
  });

  it('says a tool needs approval from the tool, or from its source while it is not on offer', () => {
    const remote = new ChangingSource(['crm__send_email']);
    remote.list = [tool('crm__send_email', { needsApproval: true }), tool('crm__find')];
    const sut = new ToolRegistry([new FixedTools([tool('search_book')]), remote]);
    expect(sut.needsApproval('crm__send_email')).toBe(true);
    expect(sut.needsApproval('crm__find')).toBe(false);
    expect(sut.needsApproval('search_book')).toBe(false);
    remote.list = [];
    expect(sut.needsApproval('crm__send_email')).toBe(true);
    expect(sut.needsApproval('made_up')).toBe(false);
  });
});
