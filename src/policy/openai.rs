//! The `openai` back-end: any OpenAI-compatible chat-completions endpoint.
