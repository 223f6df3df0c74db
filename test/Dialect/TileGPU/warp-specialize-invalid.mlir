// RUN: tile-opt %s -split-input-file -verify-diagnostics

// setmaxnreg takes multiples of 8 from 24 to 256.
func.func @odd_registers() attributes {tile.kernel} {
  // expected-error @below {{producer_registers must be a multiple of 8 from 24 to 256 (setmaxnreg), not 20}}
  tilegpu.warp_specialize {
  } {consumer_registers = 240 : i32, ctas_per_sm = 1 : i32, producer_registers = 20 : i32, producer_warps = 4 : i32}
  return
}

// -----

// setmaxnreg is per warpgroup.
func.func @one_warp() attributes {tile.kernel} {
  // expected-error @below {{needs whole warpgroups of producer warps (a multiple of 4), not 1}}
  tilegpu.warp_specialize {
  } {consumer_registers = 240 : i32, ctas_per_sm = 1 : i32, producer_registers = 24 : i32, producer_warps = 1 : i32}
  return
}

// -----

func.func @under_branch(%c: i1) attributes {tile.kernel} {
  scf.if %c {
    // expected-error @below {{must be at the top of a kernel's body}}
    tilegpu.warp_specialize {
    } {consumer_registers = 240 : i32, ctas_per_sm = 1 : i32, producer_registers = 24 : i32, producer_warps = 4 : i32}
  }
  return
}

// -----

// Every thread, producers too, must reach what comes before the split.
func.func @after_barrier() attributes {tile.kernel} {
  tilegpu.barrier
  // expected-error @below {{may follow only buffers, init_barriers and pure ops, not tilegpu.barrier}}
  tilegpu.warp_specialize {
  } {consumer_registers = 240 : i32, ctas_per_sm = 1 : i32, producer_registers = 24 : i32, producer_warps = 4 : i32}
  return
}

// -----

// mbarriers set up after the split would wait for producer warps gone.
#bar = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
func.func @init_after() attributes {tile.kernel} {
  %b = tilegpu.local_alloc : !tilegpu.memdesc<2x1x1xi64, #bar>
  // expected-error @below {{must follow every init_barriers of its kernel and be its only warp_specialize}}
  tilegpu.warp_specialize {
  } {consumer_registers = 240 : i32, ctas_per_sm = 1 : i32, producer_registers = 24 : i32, producer_warps = 4 : i32}
  tilegpu.init_barriers %b arrivals [1] : !tilegpu.memdesc<2x1x1xi64, #bar>
  return
}

// -----

// One producer thread runs the region: no barrier of all threads there.
func.func @barrier_in_producer() attributes {tile.kernel} {
  tilegpu.warp_specialize {
    // expected-error @below {{cannot run in a warp_specialize region, which one producer thread runs}}
    tilegpu.barrier
  } {consumer_registers = 240 : i32, ctas_per_sm = 1 : i32, producer_registers = 24 : i32, producer_warps = 4 : i32}
  return
}

// -----

#bar = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
func.func @arrive_on_stack(%b: !tilegpu.memdesc<2x1x1xi64, #bar>) {
  // expected-error @below {{arrives on one mbarrier, !tilegpu.memdesc<1x1xi64>}}
  tilegpu.arrive_barrier %b : !tilegpu.memdesc<2x1x1xi64, #bar>
  return
}

// -----

// An mbarrier's phase completes on at least one arrival.
#bar = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
func.func @no_arrivals(%b: !tilegpu.memdesc<2x1x1xi64, #bar>) {
  // expected-error @below {{needs at least one arrival a phase, not 0}}
  tilegpu.init_barriers %b arrivals [0] : !tilegpu.memdesc<2x1x1xi64, #bar>
  return
}

// -----

// Turns are taken by every warpgroup of the program.
module attributes {tilegpu.num_warps = 8 : i32} {
  func.func @turns_of_three() attributes {tile.kernel} {
    // expected-error @below {{takes turns among 3 warpgroups, but the program has 8 warps}}
    tilegpu.wait_turn {warpgroups = 3 : i32}
    return
  }
}

// -----

func.func @turns_of_one() attributes {tile.kernel} {
  // expected-error @below {{attribute 'warpgroups' failed to satisfy constraint}}
  tilegpu.pass_turn {warpgroups = 1 : i32}
  return
}

// -----

// The producer's region is one thread's: it takes no turn.
func.func @turn_in_producer() attributes {tile.kernel} {
  tilegpu.warp_specialize {
    // expected-error @below {{is for the program's warps, not the producer's region}}
    tilegpu.pass_turn {initial, warpgroups = 2 : i32}
  } {consumer_registers = 240 : i32, ctas_per_sm = 1 : i32, producer_registers = 24 : i32, producer_warps = 4 : i32}
  return
}
