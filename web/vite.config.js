// Vite builds the UI into one script (assets/app.js) and one style sheet (assets/app.css) with
// fixed names: the C++ server embeds them (cmake/embed_assets.cmake) and `numprobe report` inlines
// them into a single HTML file, so there are no other chunks or asset files.
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/',
  logLevel: 'warn',
  build: {
    target: 'es2020',
    sourcemap: false,
    cssCodeSplit: false,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 100_000_000,
    chunkSizeWarningLimit: 4096,
    reportCompressedSize: false,
    rollupOptions: {
      output: {
        entryFileNames: 'assets/app.js',
        chunkFileNames: 'assets/app-[name].js',
        assetFileNames: 'assets/app[extname]',
        inlineDynamicImports: true,
      },
    },
  },
});
