//! The arrays reduced, and the check of the first result.
//!
//! Participant `rank`'s element `i` is a multiple of 1/8 from 0 to 7.5 (see [`value`]). Any sum of
//! up to 4096 of them is below 2^15 with three fraction bits, which fits the 24 bits of an f32's
//! mantissa: every order of additions gives the same, exact result. So a dynamic algorithm, whose
//! order depends on who arrived first, must match the sequential sum exactly, and a wrong result
//! cannot hide behind rounding. The check still allows a relative tolerance, as any check of float
//! sums should, in case a contender adds in some other way (pairwise in wider registers, say).

/// Element `index` of participant `rank`'s input. The C baseline computes the same expression
/// (`phasers_reduce_value` in `baselines/omp_array_reduce.c`); change both together.
#[inline]
pub fn value(rank: usize, index: usize) -> f32 {
    ((rank as u64 * 131 + index as u64 * 7) % 61) as f32 / 8.0
}

/// Participant `rank`'s input of `len` elements.
pub fn input(rank: usize, len: usize) -> Vec<f32> {
    (0..len).map(|index| value(rank, index)).collect()
}

/// The sum over `threads` participants, added sequentially in rank order.
pub fn expected(threads: usize, len: usize) -> Vec<f32> {
    let mut sum = vec![0.0f32; len];
    for rank in 0..threads {
        for (index, element) in sum.iter_mut().enumerate() {
            *element += value(rank, index);
        }
    }
    sum
}

/// The relative error allowed: a few f32 roundings' worth, far below any mistake such as a
/// missing or doubled participant (which changes an element by at least 1/8 in 30,000).
const TOLERANCE: f32 = 1e-5;

/// Whether `got` is within the tolerance of `want`; never for a NaN.
fn agrees(got: f32, want: f32) -> bool {
    (got - want).abs() <= TOLERANCE * want.abs()
}

/// Checks `got` against the sequential sum `want`, naming the first element that differs.
pub fn check(got: &[f32], want: &[f32]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "wrong result: {} elements where {} were reduced",
            got.len(),
            want.len()
        ));
    }
    let wrong = got
        .iter()
        .zip(want)
        .position(|(&got, &want)| !agrees(got, want));
    match wrong {
        None => Ok(()),
        Some(index) => Err(format!(
            "wrong result: element {index} is {} where the sequential sum is {} ({} of {} elements \
             differ)",
            got[index],
            want[index],
            got.iter()
                .zip(want)
                .filter(|(&got, &want)| !agrees(got, want))
                .count(),
            want.len()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_eighths_below_eight() {
        for rank in 0..70 {
            for index in 0..200 {
                let v = value(rank, index);
                assert!((0.0..=7.5).contains(&v));
                assert_eq!((v * 8.0).fract(), 0.0);
            }
        }
    }

    #[test]
    fn any_order_of_addition_gives_the_exact_sum() {
        let threads = 4096;
        let len = 3;
        let forward = expected(threads, len);
        let mut backward = vec![0.0f32; len];
        for rank in (0..threads).rev() {
            for (index, element) in backward.iter_mut().enumerate() {
                *element += value(rank, index);
            }
        }
        let exact: Vec<f32> = (0..len)
            .map(|index| {
                (0..threads)
                    .map(|rank| f64::from(value(rank, index)))
                    .sum::<f64>() as f32
            })
            .collect();
        assert_eq!(forward, backward);
        assert_eq!(forward, exact);
    }

    #[test]
    fn the_check_names_the_first_wrong_element() {
        let want = expected(3, 10);
        assert_eq!(check(&want, &want), Ok(()));
        let mut got = want.clone();
        got[4] += 0.125;
        got[7] = f32::NAN;
        let error = check(&got, &want).unwrap_err();
        assert!(error.contains("element 4"), "{error}");
        assert!(error.contains("2 of 10 elements"), "{error}");
        assert!(check(&want[..3], &want).unwrap_err().contains("3 elements"));
        // A relative error within the tolerance passes.
        let mut close = want.clone();
        close[1] *= 1.0 + 1e-6;
        assert_eq!(check(&close, &want), Ok(()));
        assert_eq!(input(2, 3), vec![value(2, 0), value(2, 1), value(2, 2)]);
    }
}
