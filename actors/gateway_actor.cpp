// Gateway actors: a create or a close at a payment's gateway, with the store reads and the
// record of a confirmed creation around it.
#include "actors/gateway_actor.hpp"

namespace seatflow::actors {
namespace {

using Subject = GatewayAnswer::Subject;

GatewayAnswer create_there(GatewayActorState& st, const GatewaySettings& settings,
                           PaymentGatewayCaller& caller,
                           const persistence::GatewaySubject& subject) {
  if (subject.pay) {
    return {Subject::already, {GatewayResult::ok, {}, *subject.pay, subject.gateway_ref}};
  }
  const auto channel = subject.payment.channel;
  auto run = caller.create(channel, create_target(subject, settings.notify_base_url));
  if (run.result != GatewayResult::ok) {
    return {Subject::called, std::move(run)};
  }
  const auto recorded =
      st.store->record_created(subject.payment.payment_no, run.pay_json, run.gateway_ref);
  if (!recorded.ok()) {
    // Asking again is the same payment at the gateway (the same trade number and key).
    return {Subject::store_failed, std::move(run)};
  }
  return {Subject::called, std::move(run)};
}

}  // namespace

channels::CreateTarget create_target(const persistence::GatewaySubject& subject,
                                     const std::string& notify_base_url) {
  channels::CreateTarget target;
  target.payment_no = subject.payment.payment_no;
  target.order_no = subject.order_no;
  target.amount_cents = subject.payment.amount_cents;
  target.expires_at_ms = subject.expires_at_ms;
  target.notify_url = channels::notify_url(notify_base_url, subject.payment.channel);
  target.description = channels::bounded_description("SeatFlow order " + subject.order_no);
  return target;
}

GatewayActor::behavior_type gateway_actor(GatewayActor::stateful_pointer<GatewayActorState> self,
                                          StoreSettings store, GatewaySettings settings,
                                          std::shared_ptr<PaymentGatewayCaller> caller) {
  self->state.pg = open_pg(store);
  self->state.store = std::make_unique<persistence::GatewayStore>(*self->state.pg);
  return {
      [self, settings, caller](GatewayJob& job) -> GatewayAnswer {
        auto& st = self->state;
        const auto subject = st.store->subject(job.payment_no);
        if (subject.error() == persistence::errc::not_found) {
          return {Subject::unknown, {}};
        }
        if (!subject.ok()) {
          return {Subject::store_failed,
                  {GatewayResult::unreachable, "storage unavailable", {}, {}}};
        }
        const auto& found = subject.value();
        if (!found.payment.pending) {
          return {Subject::not_pending, {}};
        }
        if (!caller->has_dialect(found.payment.channel) ||
            (job.close ? !settings.close_enabled : !settings.create_enabled)) {
          return {Subject::no_gateway, {}};
        }
        if (!job.close) {
          return create_there(st, settings, *caller, found);
        }
        return {Subject::called, caller->close(found)};
      },
  };
}

}  // namespace seatflow::actors
