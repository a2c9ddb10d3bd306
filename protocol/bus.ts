import type { KeenEvent } from "./events.js";

/** A bus subscriber; a returned promise is awaited (backpressure). */
export type Subscriber = (event: KeenEvent) => void | Promise<void>;

/**
 * The one event stream. Contract: subscribers see events in emit order; `emit`
 * resolves when every subscriber has taken the event, so a slow stdout slows
 * the loop instead of growing memory. A subscriber that throws is detached and
 * reported through `onSubscriberError` — one broken consumer never stops the run.
 */
export class EventBus {
  private subscribers: Subscriber[] = [];
  constructor(private onSubscriberError: (error: unknown) => void = () => {}) {}

  subscribe(subscriber: Subscriber): () => void {
    this.subscribers.push(subscriber);
    return () => {
      this.subscribers = this.subscribers.filter((s) => s !== subscriber);
    };
  }

  async emit(event: KeenEvent): Promise<void> {
    for (const subscriber of this.subscribers) {
      try {
        const pending = subscriber(event);
        if (pending) await pending;
      } catch (error) {
        this.subscribers = this.subscribers.filter((s) => s !== subscriber);
        this.onSubscriberError(error);
      }
    }
  }
}
