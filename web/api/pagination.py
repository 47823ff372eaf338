from rest_framework.pagination import PageNumberPagination


class StandardPagination(PageNumberPagination):
    """``?page=N&page_size=M`` (at most 200); the body has count, next, previous, results."""

    page_size_query_param = "page_size"
    max_page_size = 200
