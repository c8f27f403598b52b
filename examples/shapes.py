"""An example file being edited: `make run` completes its unfinished line as a self-check."""
import math


class Circle:
    def __init__(self, radius):
        self.radius = radius

    def area(self):
        return math.pi * self.radius ** 2

    def perimeter(self):
        return 2 * math.pi *


def total_area(shapes):
    total = 0
    for shape in shapes:
        total += shape.area()
    return total
