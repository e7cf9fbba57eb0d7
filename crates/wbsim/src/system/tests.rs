//! Interrupt time: which task each delivery mode charges.

use crate::kernel::preset;
use crate::scenario::IrqDelivery;
use crate::sched::HasCore;
use crate::system::build_system;
use crate::test_support::usb_stick_scenario;

/// Four dd tasks on a four-CPU machine (one per CPU), every CPU busy;
/// returns how much interrupt time each task was charged after eight
/// 1 µs interrupts.
fn irq_time_per_task(delivery: IrqDelivery) -> Vec<u64> {
    let mut sc = usb_stick_scenario("3.10", "xfs", 4, &["0", "1", "2", "3"]);
    sc.machine.irq_delivery = delivery;
    let mut sys = build_system(&sc, &preset("3.10").unwrap(), 1);
    for cpu in 0..4 {
        assert_eq!(sys.task(cpu as u32).cpu, cpu);
        sys.core_mut().runqueue_mut(cpu).curr = Some(cpu as u32);
        sys.core_mut().runqueue_mut(cpu).busy_until = sys.now() + 1_000_000;
    }
    for _ in 0..8 {
        sys.charge_irq(1_000);
    }
    sys.tasks()[..4].iter().map(|t| t.sys_ns).collect()
}

#[test]
fn first_cpu_delivery_charges_every_interrupt_to_cpu_0() {
    assert_eq!(
        irq_time_per_task(IrqDelivery::FirstCpu),
        vec![8_000, 0, 0, 0]
    );
}

#[test]
fn round_robin_delivery_spreads_interrupts_over_the_cpus() {
    assert_eq!(irq_time_per_task(IrqDelivery::RoundRobin), vec![2_000; 4]);
}
