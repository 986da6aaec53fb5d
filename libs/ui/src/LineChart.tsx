import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

// Lines over time, drawn by uPlot (canvas). Its legend lists each line with the value under
// the pointer. A canvas says nothing to a screen reader: `label` sums it up, and every page
// that draws one shows the same numbers in a table as well.

const COLORS = [
  '#0b5cad',
  '#d1242f',
  '#1a7f37',
  '#9a6700',
  '#8250df',
  '#bf3989',
  '#0a7d8c',
  '#6e7781',
];

export function LineChart(props: {
  /** Sums the chart up for screen readers (it is an image to them). */
  label: string;
  /** Start of each bucket, epoch seconds. */
  times: number[];
  lines: { label: string; values: number[] }[];
  format: (value: number) => string;
}) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = container.current;
    if (!element) return;
    const width = () => Math.max(280, element.clientWidth - 16);
    const chart = new uPlot(
      {
        width: width(),
        height: 260,
        series: [
          {},
          ...props.lines.map((line, index) => ({
            label: line.label,
            stroke: COLORS[index % COLORS.length],
            width: 2,
            value: (_chart: uPlot, value: number | null) =>
              value === null ? '—' : props.format(value),
          })),
        ],
        axes: [
          { stroke: 'currentColor', grid: { stroke: 'rgba(128,128,128,0.2)' } },
          {
            stroke: 'currentColor',
            size: 70,
            grid: { stroke: 'rgba(128,128,128,0.2)' },
            values: (_chart, ticks) => ticks.map(props.format),
          },
        ],
        scales: { y: { range: (_chart, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      },
      [props.times, ...props.lines.map((line) => line.values)],
      element,
    );
    const resize = new ResizeObserver(() => chart.setSize({ width: width(), height: 260 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [props.times, props.lines, props.format]);
  return <figure class="chart" ref={container} role="img" aria-label={props.label} />;
}
