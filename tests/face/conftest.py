"""Shared by the face tests: the shipped small ICT face."""
import pytest


@pytest.fixture(scope="module")
def small_face():
    """The shipped small ICT face (``ipcsim.face.data.load_face("small")``)."""
    from ipcsim.face import data as face_data

    return face_data.load_face("small")
