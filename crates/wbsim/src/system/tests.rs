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

/// CPU time charged during a step reaches the task when the step ends
/// (`Core::end_step`): the user charges as user time, the others as
/// system time, all of it as vruntime and as the time the CPU is busy.
#[test]
fn a_steps_user_and_system_charges_reach_its_task_when_it_ends() {
    let sc = usb_stick_scenario("3.10", "xfs", 1, &["0"]);
    let mut sys = build_system(&sc, &preset("3.10").unwrap(), 1);
    let tid = 0;
    let now = sys.now();
    // As the engine runs a task: woken, picked (the CPU's `curr`), then
    // its step.
    let cpu = sys.core_mut().wake_up_task(tid, now).expect("an idle CPU");
    assert_eq!(sys.core_mut().pick_next(cpu, now), Some(tid));
    let t = sys.task(tid);
    let (user, system, vruntime) = (t.user_ns, t.sys_ns, t.vruntime_ns);
    sys.core_mut().begin_run(tid);
    sys.core_mut().begin_step();
    sys.charge_sys(tid, 300);
    sys.charge_user(tid, 200);
    sys.charge_sys(tid, 50);
    assert_eq!(sys.step_cost_ns(), 550);
    let (cost, end) = sys
        .core_mut()
        .end_step(tid, cpu, crate::sched::Step::Continue);
    assert_eq!((cost, end), (550, now + 550));
    let t = sys.task(tid);
    assert_eq!(t.user_ns - user, 200);
    assert_eq!(t.sys_ns - system, 350);
    assert_eq!(t.vruntime_ns - vruntime, 550);
}
