"""Recorded gripper trajectories: CSV parsing, interpolation exact at the samples, slerp between them (checked
against the quaternion slerp formula), the analytic velocity against finite differences, bad files."""
import math

import numpy as np
import pytest

from ipcsim.geometry.trajectory import (Trajectory, TrajectoryError, parse_trajectory_csv, quaternion_matrix,
                                        read_trajectory_csv)

HEADER = "time, x, y, z, qw, qx, qy, qz, width"


def _quat(axis, angle):
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * a])


def _slerp(q0, q1, u):
    """The textbook quaternion slerp (shortest arc): sin-weighted sum of the two unit quaternions."""
    q0, q1 = np.asarray(q0, float), np.asarray(q1, float)
    if q0 @ q1 < 0:
        q1 = -q1
    omega = math.acos(min(1.0, q0 @ q1))
    return (math.sin((1 - u) * omega) * q0 + math.sin(u * omega) * q1) / math.sin(omega)


QS = [_quat([0, 0, 1], 0.0), _quat([1, 2, 0.5], 1.1), _quat([-0.3, 1, 0.2], 2.9), _quat([0, 1, 1], -2.5)]
TIMES = [0.0, 0.13, 0.5, 0.61]  # uneven sampling
POS = [[0, 0, 0], [0.1, 0.02, -0.05], [0.3, 0.2, 0.0], [0.31, 0.25, 0.02]]
WIDTHS = [0.08, 0.05, 0.02, 0.06]


def _csv():
    rows = [HEADER] + [", ".join(f"{v:.17g}" for v in [t, *p, *q, w]) for t, p, q, w in zip(TIMES, POS, QS, WIDTHS)]
    return "\n".join(rows) + "\n"


def test_exact_at_samples_and_held_outside():
    traj = parse_trajectory_csv(_csv())
    for t, p, q, w in zip(TIMES, POS, QS, WIDTHS):
        pose = traj.pose(t)
        np.testing.assert_allclose(pose.position, p, atol=1e-15)
        np.testing.assert_allclose(pose.rotation, quaternion_matrix(q), atol=1e-14)  # measured 4e-16
        assert pose.width == pytest.approx(w, abs=1e-15)
    # a sample approached from inside its segment: the interpolation is continuous there
    np.testing.assert_allclose(traj.pose(TIMES[2] - 1e-12).rotation, quaternion_matrix(QS[2]), atol=1e-9)
    before, after = traj.pose(-1.0), traj.pose(9.0)
    np.testing.assert_allclose(before.rotation, quaternion_matrix(QS[0]), atol=1e-15)
    np.testing.assert_allclose(after.position, POS[-1], atol=0)
    assert after.width == WIDTHS[-1]
    assert not np.any(traj.velocity(9.0).linear) and not np.any(traj.velocity(-1.0).angular)


@pytest.mark.parametrize("seg", [0, 1, 2])
@pytest.mark.parametrize("u", [0.5, 0.25, 0.9])
def test_rotation_is_slerp_and_position_width_linear(seg, u):
    traj = parse_trajectory_csv(_csv())
    t = TIMES[seg] + u * (TIMES[seg + 1] - TIMES[seg])
    pose = traj.pose(t)
    # segment 2 goes from 2.9 rad about one axis to -2.5 about another: the shortest arc needs the sign flip
    np.testing.assert_allclose(pose.rotation, quaternion_matrix(_slerp(QS[seg], QS[seg + 1], u)), atol=1e-13)
    np.testing.assert_allclose(pose.position, (1 - u) * np.array(POS[seg]) + u * np.array(POS[seg + 1]), atol=1e-15)
    assert pose.width == pytest.approx((1 - u) * WIDTHS[seg] + u * WIDTHS[seg + 1], abs=1e-15)


def test_slerp_midpoint_halves_the_angle():
    q1 = _quat([0, 0, 1], 1.2)
    traj = Trajectory([0.0, 2.0], [[0, 0, 0], [0, 0, 0]], [QS[0], -q1], [0.0, 0.0])  # -q1: same rotation
    np.testing.assert_allclose(traj.pose(1.0).rotation, quaternion_matrix(_quat([0, 0, 1], 0.6)), atol=1e-15)


def test_velocity_is_the_derivative_of_the_interpolation():
    traj = parse_trajectory_csv(_csv())
    eps = 1e-6
    for t in (0.05, 0.2, 0.4, 0.55):
        vel, a, b = traj.velocity(t), traj.pose(t - eps), traj.pose(t + eps)
        np.testing.assert_allclose((b.position - a.position) / (2 * eps), vel.linear, rtol=1e-7, atol=1e-9)
        assert (b.width - a.width) / (2 * eps) == pytest.approx(vel.width_rate, rel=1e-6)
        d_rot = (b.rotation - a.rotation) / (2 * eps)  # = [omega] R
        omega_x = d_rot @ traj.pose(t).rotation.T
        # measured: 2e-9 (central difference of a rotation at 1e-6 s)
        np.testing.assert_allclose([omega_x[2, 1], omega_x[0, 2], omega_x[1, 0]], vel.angular, atol=1e-7)
        np.testing.assert_allclose(omega_x + omega_x.T, 0, atol=1e-7)


def test_reads_files_any_column_order_and_extra_columns(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("width,qz,qy,qx,qw,z,y,x,time,gripper_force\n0.1,0,0,0,1,3,2,1,0.5,7\n0.1,0,0,0,1,3,2,2,1.5,7\n")
    traj = read_trajectory_csv(path)
    np.testing.assert_allclose(traj.pose(1.0).position, [1.5, 2, 3])
    assert traj.time_range == (0.5, 1.5)


BAD = {
    "missing column": (HEADER.replace(", qy", "") + "\n0,0,0,0,1,0,0,0\n", ["row 1", "column 'qy'", "missing"]),
    "non-monotone time": (HEADER + "\n0,0,0,0,1,0,0,0,0\n0.2,0,0,0,1,0,0,0,0\n0.2,0,0,0,1,0,0,0,0\n",
                          ["row 4", "column 'time'", "increase"]),
    "non-unit quaternion": (HEADER + "\n0,0,0,0,1,0,0,0,0\n1,0,0,0,1.002,0,0,0,0\n",
                            ["row 3", "column 'qw'", "norm 1.002"]),
    "NaN": (HEADER + "\n0,0,0,0,1,0,0,0,0\n1,0,nan,0,1,0,0,0,0\n", ["row 3", "column 'y'", "finite"]),
    "unparsable value": (HEADER + "\n0,0,0,0,1,0,0,0,0\n1,0,0,0,1,0,0,0,0.1m\n", ["row 3", "column 'width'", "0.1m"]),
    "short row": (HEADER + "\n0,0,0,0,1,0,0,0,0\n1,0,0,0,1\n", ["row 3", "does not parse"]),
    "no rows": (HEADER + "\n", ["row 2", "no sample"]),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_files_name_row_and_column(case):
    text, needles = BAD[case]
    with pytest.raises(TrajectoryError) as info:
        parse_trajectory_csv(text, "pick.csv")
    message = str(info.value)
    assert message.startswith("pick.csv: ") and "\n" not in message
    for n in needles:
        assert n in message, (n, message)


def test_quaternion_within_tolerance_is_normalised():
    traj = parse_trajectory_csv(HEADER + "\n0,0,0,0,1.0009,0,0,0,0\n")
    np.testing.assert_allclose(traj.pose(0.0).rotation, np.eye(3), atol=1e-15)
    assert traj.pose(5.0).width == 0.0 and not np.any(traj.velocity(0.0).linear)  # one row: a fixed pose
