import { Block } from './html-blocks';
import { flattenOutline, headingOutline, OutlineNode } from './outline';

const block = (doc: string, text = 'x', heading: number | null = null): Block => ({
  text,
  heading,
  doc,
  ids: [],
  within: [],
  note: null,
  refs: [],
  role: null,
  linear: true,
});
const node = (title: string, at: number | null, children: OutlineNode[] = []): OutlineNode => ({ title, at, children });

describe(flattenOutline.name, () => {
  const blocks = ['a', 'a', 'b', 'b', 'c', 'c'].map((d) => block(d));

  it('reads a part holding chapters as a part, and a chapter holding entries (in its own document or not) as sections', () => {
    expect(
      flattenOutline(
        [
          node('Part One', 0, [node('Landfall', 2), node('Harbour', 4, [node('Morning', 5)])]),
          node('The Crossing', 1, [node('At sea', 3)]),
        ],
        blocks,
      ),
    ).toEqual([
      { at: 0, kind: 'part', title: 'Part One' },
      { at: 1, kind: 'chapter', title: 'The Crossing' },
      { at: 2, kind: 'chapter', title: 'Landfall' },
      { at: 3, kind: 'section', title: 'At sea' },
      { at: 4, kind: 'chapter', title: 'Harbour' },
      { at: 5, kind: 'section', title: 'Morning' },
    ]);
  });

  it('follows epub:type over titles: a part is a part, a chapter a chapter', () => {
    const marked = blocks.map((b, i) => ({ ...b, role: i === 0 ? 'part' : i === 2 ? 'chapter' : null }));
    const kinds = (n: OutlineNode) => flattenOutline([n], marked).map((e) => e.kind);
    expect(kinds(node('Summer', 0, [node('Arrival', 1)]))).toEqual(['part', 'chapter']);
    expect(kinds(node('Part Two', 2, [node('Chapter 9', 3)]))).toEqual(['chapter', 'section']);
  });

  it('reads an entry titled as a part, or holding entries titled as chapters, or linking nowhere, as a part', () => {
    const kinds = (n: OutlineNode) => flattenOutline([n], blocks).map((e) => e.kind);
    expect(kinds(node('Book II', 0, [node('Arrival', 1)]))).toEqual(['part', 'chapter']);
    expect(kinds(node('Summer', 0, [node('Chapter 4', 1)]))).toEqual(['part', 'chapter']);
    expect(kinds(node('Summer', null, [node('Arrival', 1)]))).toEqual(['chapter']);
    expect(kinds(node('Arrival', 0, [node('Dawn', 1)]))).toEqual(['chapter', 'section']);
  });

  it('orders entries by where they start, one of a kind per block', () => {
    expect(flattenOutline([node('Two', 3), node('One', 1), node('One again', 1)], blocks)).toEqual([
      { at: 1, kind: 'chapter', title: 'One' },
      { at: 3, kind: 'chapter', title: 'Two' },
    ]);
  });

  it('stops at a depth no book has', () => {
    let deep = node('leaf', 1);
    for (let i = 0; i < 10_000; i++) deep = node(`level ${i}`, 1, [deep]);
    expect(() => flattenOutline([deep], blocks)).not.toThrow();
  });
});

describe(headingOutline.name, () => {
  it('takes the one top heading above all others as the title', () => {
    const blocks = [block('', 'Tides', 1), block('', 'Spring', 2), block(''), block('', 'Neap', 2), block('')];
    const { nodes, title } = headingOutline(blocks);
    expect(title).toEqual({ text: 'Tides', at: 0 });
    expect(nodes.map((n) => n.title)).toEqual(['Spring', 'Neap']);
  });

  it('nests deeper headings under the one before, and skips notes and documents outside the reading order', () => {
    const blocks = [
      block('', 'One', 2),
      block('', 'Scene', 4),
      block('', 'Two', 2),
      { ...block('', 'A note', 3), note: '#n1' },
      { ...block('', 'Aside', 1), linear: false },
    ];
    const { nodes, title } = headingOutline(blocks);
    expect(title).toBeNull();
    expect(nodes).toEqual([node('One', 0, [node('Scene', 1)]), node('Two', 2)]);
  });
});
