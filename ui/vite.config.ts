import { defineConfig } from "vite";

// The UI is served by `harness-s serve` at `/` and loaded from disk by the desktop shell,
// so every asset path is relative and nothing is fetched from the network at runtime.
export default defineConfig({
  base: "./",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: { outDir: "dist", emptyOutDir: true, target: "es2022", assetsInlineLimit: 0 },
  server: { port: 5173, strictPort: true },
});
