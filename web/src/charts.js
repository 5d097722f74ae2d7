// ECharts with only the pieces the views use (tree-shaken by the build), and a helper that marks
// a chart's container data-rendered="true" once ECharts has drawn it (tests wait for that).
// Charts paint on canvas; small ones whose labels must be readable in the DOM (by tests and
// screen readers) use the SVG renderer.
import * as echarts from 'echarts/core';
import { BarChart, HeatmapChart, LineChart } from 'echarts/charts';
import {
  DataZoomComponent,
  GridComponent,
  LegendComponent,
  TitleComponent,
  TooltipComponent,
  VisualMapComponent,
} from 'echarts/components';
import { CanvasRenderer, SVGRenderer } from 'echarts/renderers';

echarts.use([
  BarChart,
  HeatmapChart,
  LineChart,
  DataZoomComponent,
  GridComponent,
  LegendComponent,
  TitleComponent,
  TooltipComponent,
  VisualMapComponent,
  CanvasRenderer,
  SVGRenderer,
]);

const live = new Set();

export function chart(container, option, { renderer = 'canvas' } = {}) {
  container.dataset.rendered = 'false';
  const instance = echarts.init(container, null, { renderer });
  instance.on('finished', () => {
    container.dataset.rendered = 'true';
  });
  instance.setOption({ animation: false, ...option });
  live.add(instance);
  return instance;
}

// Disposes one chart. zrender 6 paints a heatmap's cells in slices of 15 ms, one per animation
// frame, and its pending frame reads the painter that dispose() has already freed ("Cannot read
// properties of null (reading 'layerStack')" on a slow machine). clear() repaints synchronously
// with nothing to draw, which supersedes the pending frame, so the frame returns untouched.
export function disposeChart(instance) {
  if (!instance || instance.isDisposed()) return;
  live.delete(instance);
  instance.clear();
  instance.dispose();
}

// Disposes every chart (called before a view is replaced).
export function disposeCharts() {
  for (const instance of [...live]) disposeChart(instance);
}

window.addEventListener('resize', () => {
  for (const instance of live) instance.resize();
});
