import { defineConfig } from "vite";

// The UI is served by `harness-s serve` at `/` and loaded from disk by the desktop shell,
// so every asset path is relative and nothing is fetched from the network at runtime.
// `npm run dev` forwards `/api` to a running `harness-s serve` named by HARNESS_S_API
// (e.g. http://127.0.0.1:8765) with that server's own Host (it answers no other); open the dev page
// with its `?token=`.
const api = process.env.HARNESS_S_API;

export default defineConfig({
  base: "./",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: { outDir: "dist", emptyOutDir: true, target: "es2022", assetsInlineLimit: 0 },
  server: { port: 5173, strictPort: true, proxy: api ? { "/api": { target: api, changeOrigin: true } } : undefined },
});
